package dev.quiver.broadcast;

import dev.quiver.io.Closeables;
import dev.quiver.ipc.DecodedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Every stream of one broadcast, decoded. Owns its streams' references on their buffers. */
final class DecodedBroadcast implements AutoCloseable {

  private final List<DecodedStream> streams;

  public DecodedBroadcast(List<DecodedStream> streams) {
    this.streams = Collections.unmodifiableList(new ArrayList<>(streams));
  }

  public List<DecodedStream> streams() {
    return streams;
  }

  /** True when any stream carries dictionaries; such broadcasts are not shared between tasks. */
  public boolean hasDictionaries() {
    for (DecodedStream stream : streams) {
      if (stream.hasDictionaries()) {
        return true;
      }
    }
    return false;
  }

  public long rowCount() {
    long rows = 0;
    for (DecodedStream stream : streams) {
      rows += stream.rowCount();
    }
    return rows;
  }

  @Override
  public void close() {
    Closeables.closeAll(streams);
  }
}
