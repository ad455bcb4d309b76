package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.io.InputStream;

/**
 * The compressed streams that make up one broadcast value: Arrow IPC streams for {@link
 * BroadcastDecoder#arrowIpc()}, any format for another decoder.
 */
@Public
public interface BroadcastSource {

  /** The broadcast's id, unique within the application; the cache's key. */
  long broadcastId();

  int streamCount();

  /** Opens stream {@code index} (compressed with {@link #codec()}); the caller closes it. */
  InputStream openStream(int index) throws IOException;

  /**
   * The number of bytes stream {@code index} holds, or -1 if unknown. When known, an uncompressed
   * stream is held to it exactly and a compressed one bounds what the decode allocates ahead of the
   * bytes ({@link dev.quiver.ipc.ArrowIpc#decode(InputStream, long, StreamCodec,
   * org.apache.arrow.memory.BufferAllocator, String)}).
   */
  default long streamLength(int index) {
    return -1;
  }

  StreamCodec codec();
}
