package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.DecodedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.util.AutoCloseables;

/**
 * Every stream of one broadcast, decoded as Arrow IPC ({@link BroadcastDecoder#arrowIpc()}). Owns
 * its streams' references on their buffers.
 */
@Public
public final class DecodedBroadcast implements DecodedForm {

  private final List<DecodedStream> streams;

  public DecodedBroadcast(List<DecodedStream> streams) {
    this.streams = Collections.unmodifiableList(new ArrayList<>(streams));
  }

  public List<DecodedStream> streams() {
    return streams;
  }

  /**
   * None: every broadcast decoded as Arrow IPC is shared, dictionaries included. Each task sees the
   * shared batches and dictionaries through views of its own ({@link BroadcastReader#current()},
   * {@link BroadcastReader#dictionaries()}), and the decode, delta dictionaries appended, is whole
   * before any task reads it.
   */
  @Override
  public Optional<String> whyNotShared() {
    return Optional.empty();
  }

  /** True when any stream carries dictionaries. */
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
    AutoCloseables.closeNoChecked(AutoCloseables.all(streams));
  }
}
