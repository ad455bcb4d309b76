package dev.quiver.broadcast;

import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One task's hold on a {@link DecodedBroadcastCache} entry, from the moment it arrives: released
 * once, by the task's completion or earlier (a waiter that will not share the entry), closing the
 * task's reader first. Its reader's derived values and further holds go through it.
 */
final class TaskHold implements BroadcastReader.HeldEntry, BroadcastHold.Owner {
  final CacheEntry entry;
  private final DecodedBroadcastCache cache;
  private final TaskScope task;
  private final AtomicBoolean released = new AtomicBoolean();
  private volatile BroadcastReader reader;

  TaskHold(DecodedBroadcastCache cache, CacheEntry entry, TaskScope task) {
    this.cache = cache;
    this.entry = entry;
    this.task = task;
  }

  long attemptId() {
    return task.attemptId();
  }

  /**
   * The task's reader on the now decoded entry, closed when the hold ends, telling how its open was
   * served and what it cost.
   */
  BroadcastReader attach(BroadcastReader.Served served, long decodeNanos, long waitNanos) {
    BroadcastReader attached =
        new BroadcastReader(entry.decoded(), entry.allocator, this, served, decodeNanos, waitNanos);
    reader = attached;
    return attached;
  }

  @Override
  public <T> T derived(Object key, Derivation<T> derivation) throws IOException {
    return cache.derive(entry, task, reader, key, derivation);
  }

  @Override
  public BroadcastHold holdAgain(String holder) {
    return cache.holdFor(entry, this, holder);
  }

  @Override
  public void release(BroadcastHold hold) {
    cache.release(hold, entry);
  }

  @Override
  public void releasedAgain(BroadcastHold hold) {
    cache.counters().doubleReleases.incrementAndGet();
    DecodeLog.doubleRelease(hold);
  }

  /** Ends the task's hold, once. */
  void release() {
    if (released.compareAndSet(false, true)) {
      BroadcastReader attached = reader;
      if (attached != null) {
        attached.close();
      }
      cache.release(entry);
    }
  }
}
