package dev.quiver.broadcast;

import java.util.Objects;
import org.apache.arrow.util.Preconditions;

/** What a cache entry is of: a broadcast, decoded by the decoder of a name. */
final class EntryKey {
  final long broadcastId;
  final String decoder;

  EntryKey(long broadcastId, String decoder) {
    this.broadcastId = broadcastId;
    this.decoder = Preconditions.checkNotNull(decoder, "decoder name");
  }

  /** The Arrow decoder's entries keep the allocator names they always had. */
  String allocatorName() {
    return ArrowIpcDecoder.INSTANCE.name().equals(decoder)
        ? "broadcast-" + broadcastId
        : "broadcast-" + broadcastId + "-" + decoder;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof EntryKey
        && ((EntryKey) other).broadcastId == broadcastId
        && ((EntryKey) other).decoder.equals(decoder);
  }

  @Override
  public int hashCode() {
    return Objects.hash(broadcastId, decoder);
  }

  @Override
  public String toString() {
    return "broadcast " + broadcastId + " (" + decoder + ")";
  }
}
