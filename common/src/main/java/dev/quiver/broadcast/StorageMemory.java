package dev.quiver.broadcast;

import dev.quiver.annotation.Public;

/**
 * The memory pool a cache accounts its retained entries in: on an executor, Spark's storage memory,
 * so that what Quiver keeps past its tasks is visible to Spark and bounded by it.
 *
 * <p>Implementations must be thread-safe. The cache acquires an entry's bytes when the entry
 * becomes retained, once per {@link MemoryLocation} the entry has bytes in, all or none, and
 * releases exactly those when it stops being retained. Where each location's bytes are accounted is
 * the implementation's choice: on Spark, heap bytes in the on-heap pool, Arrow and native bytes in
 * the off-heap pool when Spark has one.
 */
@Public
public interface StorageMemory {

  /**
   * Takes {@code bytes} for the retained entry of {@code broadcastId}, only if they are free now:
   * an implementation never makes its owner evict data of its own to make room (the cache would
   * rather not retain).
   *
   * @return whether the bytes were taken
   */
  boolean tryAcquire(long broadcastId, long bytes, MemoryLocation location);

  /** Gives back {@code bytes} of {@code location} taken for {@code broadcastId}. */
  void release(long broadcastId, long bytes, MemoryLocation location);

  /**
   * Whether the pool's free memory is low: the cache then releases idle retained entries, least
   * recently used first, before the owner has to evict its own data.
   */
  boolean underPressure();

  /**
   * A pool with {@code capacity} bytes for every location together, under pressure when less than a
   * tenth is free.
   */
  static StorageMemory bounded(long capacity) {
    return new BoundedStorageMemory(capacity);
  }
}
