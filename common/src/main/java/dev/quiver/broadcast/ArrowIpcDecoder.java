package dev.quiver.broadcast;

import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;

/** {@link BroadcastDecoder#arrowIpc()}: every stream through {@link ArrowIpc}, in order. */
final class ArrowIpcDecoder implements BroadcastDecoder<DecodedBroadcast> {

  static final ArrowIpcDecoder INSTANCE = new ArrowIpcDecoder();

  private ArrowIpcDecoder() {}

  @Override
  public DecodedBroadcast decode(BroadcastSource source, BufferAllocator allocator)
      throws IOException {
    List<DecodedStream> streams = new ArrayList<>(source.streamCount());
    try {
      for (int i = 0; i < source.streamCount(); i++) {
        String what = "broadcast " + source.broadcastId() + ", stream " + i;
        try (InputStream in = source.openStream(i)) {
          streams.add(ArrowIpc.decode(in, source.streamLength(i), source.codec(), allocator, what));
        }
      }
      return new DecodedBroadcast(streams);
    } catch (IOException | RuntimeException | Error e) {
      AutoCloseables.close(e, streams);
      throw e;
    }
  }

  @Override
  public String name() {
    return "arrow-ipc";
  }
}
