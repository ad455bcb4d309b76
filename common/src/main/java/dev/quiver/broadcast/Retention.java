package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.function.LongPredicate;
import org.apache.arrow.util.Preconditions;

/**
 * Whether and how a cache keeps an entry after its last holder: up to {@link #maxBytes()} bytes in
 * all, accounted in {@link #memory()}, for as long as {@link #isLive(long)} says the broadcast
 * lives.
 */
@Public
public final class Retention {

  private static final Retention DISABLED = new Retention(0, null, id -> false);

  private final long maxBytes;
  private final StorageMemory memory;
  private final LongPredicate live;

  private Retention(long maxBytes, StorageMemory memory, LongPredicate live) {
    this.maxBytes = maxBytes;
    this.memory = memory;
    this.live = live;
  }

  /** No retention: an entry goes when its last holder completes. */
  public static Retention disabled() {
    return DISABLED;
  }

  /**
   * Retention of at most {@code maxBytes} in all, in {@code memory}, of broadcasts {@code live}
   * still reports alive (asked at each open and each task end; it must be cheap and thread-safe).
   */
  public static Retention of(long maxBytes, StorageMemory memory, LongPredicate live) {
    Preconditions.checkArgument(maxBytes > 0, "maxBytes must be positive: %s", maxBytes);
    return new Retention(
        maxBytes,
        Preconditions.checkNotNull(memory, "memory"),
        Preconditions.checkNotNull(live, "live"));
  }

  public boolean enabled() {
    return maxBytes > 0;
  }

  /** The most bytes all retained entries may take together. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Where retained entries' bytes are accounted; null when disabled. */
  public StorageMemory memory() {
    return memory;
  }

  /** Whether the broadcast {@code broadcastId} still lives where this cache runs. */
  public boolean isLive(long broadcastId) {
    return live.test(broadcastId);
  }
}
