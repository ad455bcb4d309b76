package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.LogCapture;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.slf4j.event.Level;

/**
 * What the retention and derived-value tests share: broadcast {@link #first}, the same streams
 * under other ids, ids 1 to 5 live until a test says otherwise, and {@link #cache}, which retains
 * once a test makes it a {@link #retainingCache}; and the scenarios that a consumer's hold and a C
 * Data export of broadcast 1 must both pass.
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
   * Broadcast 1 as a consumer holds it past its task's end, whether through a {@link BroadcastHold}
   * or a batch exported through the C Data Interface: both keep the entry the same way, so the
   * scenarios below are written once for both.
   */
  interface HeldForAConsumer {
    /** Asserts that what the consumer holds is still there to read. */
    void assertReadable();

    /** The consumer's release. */
    void release() throws Exception;
  }

  /** What a consumer takes of a reader's current batch to release later: a hold or an export. */
  interface ConsumerTake {
    AutoCloseable take(BroadcastReader reader, String consumer) throws Exception;
  }

  /**
   * Four tasks read broadcast 1, {@code perBatch} consumers taking each batch; half the tasks end
   * before any release, the other half while the releases run on other threads, in a shuffled
   * order: the entry is freed once, by whichever came last, and nothing is left held.
   */
  void assertReleasesOnOtherThreadsFreeTheEntryOnce(int perBatch, ConsumerTake take)
      throws Exception {
    List<FakeTask> started = new ArrayList<>();
    List<AutoCloseable> taken = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      FakeTask task = new FakeTask();
      BroadcastReader reader = cache.open(first, task, true);
      for (int batch = 0; reader.next(); batch++) {
        for (int c = 0; c < perBatch; c++) {
          taken.add(take.take(reader, "consumer " + t + "." + batch + "." + c));
        }
      }
      started.add(task);
    }
    assertEquals(taken.size(), cache.outstandingHolds().size(), "one per consumer");
    started.get(0).complete();
    started.get(1).complete();
    Collections.shuffle(taken, new Random(27));
    releaseOnThreadsWhileTasksEnd(taken, started.subList(2, 4));
    assertNull(entry(1), "freed once, by whichever release or task end came last");
    assertEquals(1, decoder.calls());
    assertEquals(0, cache.counters().doubleReleases());
    assertEquals(0, cache.counters().entriesHeld());
    assertTrue(cache.outstandingHolds().isEmpty());
    assertEquals(0, allocator.getAllocatedMemory());
  }

  /** Broadcast 1, held, is dropped: the drop only marks it, and the release frees it. */
  void assertADroppedEntryGoesAtTheRelease(HeldForAConsumer held) throws Exception {
    live.remove(1L);
    cache.drop(1);
    cache.checkRetained();
    assertEquals(1, holders(1), "a drop only marks an entry a consumer holds");
    held.assertReadable();

    held.release();
    assertNull(entry(1), "freed at its last release, not retained");
    assertEquals(0, memory.used());
    closeAndAssertAllFreed();
  }

  /**
   * The cache closes while broadcast 1 is held by {@code consumer}, taken in {@code task}: the
   * close logs the hold as a leak, naming both; the entry outlives the close, and the release after
   * it frees it.
   */
  void assertALeakAtCloseGoesAtTheRelease(HeldForAConsumer held, String consumer, FakeTask task)
      throws Exception {
    try (LogCapture log = LogCapture.of(DecodedBroadcastCache.class)) {
      cache.close();
      List<String> warnings = log.at(Level.WARN);
      assertEquals(1, warnings.size(), warnings::toString);
      String leak = warnings.get(0);
      assertTrue(leak.contains("Leaked the hold on broadcast 1 by " + consumer), leak);
      assertTrue(leak.contains("task " + task.attemptId()), leak);
    }
    assertNotNull(entry(1), "a held entry outlives the cache's close");
    held.assertReadable();

    held.release();
    assertNull(entry(1), "released after the close, it is freed, not retained");
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
