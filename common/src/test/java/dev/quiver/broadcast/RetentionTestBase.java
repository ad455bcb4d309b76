package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the retention and derived-value tests share: broadcast {@link #first}, the same streams
 * under other ids, ids 1 to 5 live until a test says otherwise, and {@link #cache}, which retains
 * once a test makes it a {@link #retainingCache}.
 */
abstract class RetentionTestBase extends CacheTestBase {

  final Set<Long> live = ConcurrentHashMap.newKeySet();

  /** The storage memory of the retaining cache; until there is one, a pool of no bytes. */
  BoundedStorageMemory memory = new BoundedStorageMemory(0);

  /** The bytes of {@link #memory}'s pool, which it does not tell. */
  private long memoryCapacity;

  TestBroadcast first;

  /** Bytes one decode of each test broadcast takes (they all hold the same streams). */
  long size;

  @BeforeEach
  void encodeTheBroadcasts() throws Exception {
    first = encode(1, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {400, 300});
    size = bytesOfOneDecode(first, allocator);
    for (long id = 1; id <= 5; id++) {
      live.add(id);
    }
  }

  /**
   * Makes {@link #cache} one whose budget is {@code budget} bytes, in a pool of {@code capacity}.
   */
  void retainingCache(long budget, long capacity) {
    memory = new BoundedStorageMemory(capacity);
    memoryCapacity = capacity;
    cache = caches.with(Retention.of(budget, memory, live::contains));
  }

  /**
   * The holds on entry {@code id} ({@link CacheSnapshot.EntryState#holders}); -1 when not cached.
   */
  int holders(long id) {
    CacheSnapshot.EntryState e = entry(id);
    return e == null ? -1 : e.holders();
  }

  /**
   * Spark's own blocks take all of {@link #memory} but {@code free} bytes, fewer than its pressure
   * line, so that the cache is under pressure; returns the bytes they took.
   */
  long sparkBlocksLeaving(long free) {
    long sparkBlocks = memoryCapacity - memory.used() - free;
    assertTrue(memory.tryAcquire(-1, sparkBlocks), "no room for Spark's blocks");
    assertTrue(memory.underPressure());
    return sparkBlocks;
  }

  /**
   * The end of a test under pressure: Spark's blocks are all that is left in storage memory; they
   * go, and then everything else as in {@link #closeAndAssertAllFreed}.
   */
  void releaseSparkBlocksAndAssertAllFreed(long sparkBlocks) {
    assertEquals(sparkBlocks, memory.used(), "a cache entry is still in storage memory");
    memory.release(-1, sparkBlocks);
    closeAndAssertAllFreed();
  }

  /**
   * The end of each test: closed, no storage memory, nothing retained or held (the fixture then
   * checks that nothing is cached and that every allocator is at zero).
   */
  void closeAndAssertAllFreed() {
    cache.close();
    assertEquals(0, memory.used(), "storage memory still acquired after close");
    assertEquals(0, cache.counters().bytesRetained());
    assertEquals(0, cache.counters().entriesRetained());
    assertEquals(0, cache.counters().bytesHeld(), "heap bytes of a value still counted");
  }
}
