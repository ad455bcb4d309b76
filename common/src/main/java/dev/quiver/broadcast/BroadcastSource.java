package dev.quiver.broadcast;

import dev.quiver.ipc.StreamCodec;
import java.io.IOException;
import java.io.InputStream;

/** The compressed Arrow IPC streams that make up one broadcast value. */
public interface BroadcastSource {

  /** The broadcast's id, unique within the application; the cache's key. */
  long broadcastId();

  int streamCount();

  /** Opens stream {@code index} (compressed with {@link #codec()}); the caller closes it. */
  InputStream openStream(int index) throws IOException;

  StreamCodec codec();
}
