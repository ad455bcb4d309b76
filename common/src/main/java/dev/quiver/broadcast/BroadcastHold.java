package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A hold on a decoded broadcast that outlives the task that took it: the entry, its buffers and its
 * derived values stay until the hold is closed, from any thread, even after that task has ended.
 * While any hold is open, a drop, an eviction or the cache's close only marks the entry, which goes
 * at its last release. While such holds alone hold it, its tasks gone, its bytes are accounted in
 * the cache's storage memory (that of its {@link Retention}) until then, as no task's they are. For
 * consumers that keep the broadcast's buffers past their task, such as native code the batches were
 * exported to (see {@link BroadcastReader#hold(String)}).
 *
 * <p>Thread-safe. Closing ends the hold once; a second close is reported (logged and counted in
 * {@link CacheCounters#doubleReleases()}) and does nothing else.
 */
@Public
public final class BroadcastHold implements AutoCloseable {

  /** What a hold's close does: the cache's part. */
  interface Owner {
    /** Ends {@code hold}, once. */
    void release(BroadcastHold hold);

    /** Reports a close of {@code hold} after the first. */
    void releasedAgain(BroadcastHold hold);
  }

  private final long broadcastId;
  private final long taskAttemptId;
  private final String holder;
  private final Owner owner;
  private final AtomicBoolean released = new AtomicBoolean();

  BroadcastHold(long broadcastId, long taskAttemptId, String holder, Owner owner) {
    this.broadcastId = broadcastId;
    this.taskAttemptId = taskAttemptId;
    this.holder = holder;
    this.owner = owner;
  }

  public long broadcastId() {
    return broadcastId;
  }

  /** The task that took the hold. */
  public long taskAttemptId() {
    return taskAttemptId;
  }

  /** Who holds, as the taker said: it names the hold in leak reports. */
  public String holder() {
    return holder;
  }

  public boolean isReleased() {
    return released.get();
  }

  /** Ends the hold; the entry goes if it was the last one and the entry is not retained. */
  @Override
  public void close() {
    if (released.compareAndSet(false, true)) {
      owner.release(this);
    } else {
      owner.releasedAgain(this);
    }
  }

  @Override
  public String toString() {
    return "hold on broadcast "
        + broadcastId
        + " by "
        + holder
        + " (taken in task "
        + taskAttemptId
        + (released.get() ? ", released)" : ")");
  }
}
