package dev.quiver.broadcast;

import org.apache.arrow.util.Preconditions;

/** {@link StorageMemory} of a fixed capacity, for caches outside Spark and for tests. */
final class BoundedStorageMemory implements StorageMemory {

  private final long capacity;
  private long used;

  BoundedStorageMemory(long capacity) {
    Preconditions.checkArgument(capacity >= 0, "capacity must not be negative: %s", capacity);
    this.capacity = capacity;
  }

  @Override
  public boolean tryAcquire(long broadcastId, long bytes, MemoryLocation location) {
    return tryAcquire(broadcastId, bytes);
  }

  @Override
  public void release(long broadcastId, long bytes, MemoryLocation location) {
    release(broadcastId, bytes);
  }

  /** Takes {@code bytes} if they are free: one pool for every location. */
  synchronized boolean tryAcquire(long broadcastId, long bytes) {
    Preconditions.checkArgument(bytes >= 0, "bytes must not be negative: %s", bytes);
    if (bytes > capacity - used) {
      return false;
    }
    used += bytes;
    return true;
  }

  synchronized void release(long broadcastId, long bytes) {
    Preconditions.checkState(bytes >= 0 && bytes <= used, "releasing %s of %s used", bytes, used);
    used -= bytes;
  }

  @Override
  public synchronized boolean underPressure() {
    return capacity - used < capacity / 10;
  }

  /** Bytes taken now. */
  synchronized long used() {
    return used;
  }
}
