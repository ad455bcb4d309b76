package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.Collections;
import java.util.List;

/** What a {@link DecodedBroadcastCache} held at one moment. */
@Public
public final class CacheSnapshot {

  /** One cached broadcast. */
  public static final class EntryState {
    private final long broadcastId;
    private final boolean decoded;
    private final boolean retained;
    private final int holders;
    private final long bytes;
    private final String decoder;

    EntryState(
        long broadcastId,
        String decoder,
        boolean decoded,
        boolean retained,
        int holders,
        long bytes) {
      this.broadcastId = broadcastId;
      this.decoder = decoder;
      this.decoded = decoded;
      this.retained = retained;
      this.holders = holders;
      this.bytes = bytes;
    }

    public long broadcastId() {
      return broadcastId;
    }

    /** The name of the decoder that made it ({@link BroadcastDecoder#name()}). */
    public String decoder() {
      return decoder;
    }

    /** False while the first task is still decoding it. */
    public boolean decoded() {
      return decoded;
    }

    /**
     * True when no task holds it and it is kept for later tasks, its bytes acquired from the
     * storage memory.
     */
    public boolean retained() {
      return retained;
    }

    /**
     * Holds on it: one per task reading it (its views and its hold end when it completes), and one
     * more while a task builds or waits for one of its derived values.
     */
    public int holders() {
      return holders;
    }

    /**
     * Its bytes: allocated for it (views and derived values' Arrow memory included), plus its
     * derived values' heap bytes.
     */
    public long bytes() {
      return bytes;
    }

    @Override
    public String toString() {
      return String.format(
          "broadcast %d: %s, %d holders, %d bytes",
          broadcastId, retained ? "retained" : decoded ? "decoded" : "decoding", holders, bytes);
    }
  }

  private final List<EntryState> entries;
  private final long allocatedBytes;

  CacheSnapshot(List<EntryState> entries, long allocatedBytes) {
    this.entries = Collections.unmodifiableList(entries);
    this.allocatedBytes = allocatedBytes;
  }

  /**
   * The shared entries, held or retained, in no particular order. Private (per-task) decodes are
   * not listed.
   */
  public List<EntryState> entries() {
    return entries;
  }

  /**
   * Bytes allocated under the cache's allocator: shared and retained entries and the private
   * decodes of tasks still running.
   */
  public long allocatedBytes() {
    return allocatedBytes;
  }

  public boolean isEmpty() {
    return entries.isEmpty() && allocatedBytes == 0;
  }

  @Override
  public String toString() {
    return entries + ", " + allocatedBytes + " bytes allocated";
  }
}
