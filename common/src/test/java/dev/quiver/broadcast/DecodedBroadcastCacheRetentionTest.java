package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.FakeTask;
import org.junit.jupiter.api.Test;

/**
 * Retention: an entry outlives its last holder while its broadcast lives and its bytes fit the
 * budget and the storage memory; only idle entries are evicted, for each cause.
 */
class DecodedBroadcastCacheRetentionTest extends RetentionTestBase {

  /** What Spark's own blocks take from the storage memory in these tests. */
  private static final long SPARK_BLOCKS = -1;

  private TestBroadcast broadcast(long id) {
    return first.withId(id);
  }

  /** Opens {@code id} for a new task and reads it all; the task still holds it. */
  private FakeTask openAndRead(long id) throws Exception {
    FakeTask task = new FakeTask();
    TestBroadcast broadcast = broadcast(id);
    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, task, true), broadcast, null);
    return task;
  }

  /** One task that reads {@code id} and completes. */
  private void readOnce(long id) throws Exception {
    openAndRead(id).complete();
  }

  private void assertRetained(long id) {
    CacheSnapshot.EntryState e = entry(id);
    assertTrue(e != null && e.retained() && e.holders() == 0, () -> id + ": " + cache.snapshot());
    assertEquals(size, e.bytes(), "a retained entry holds one decode and no views");
  }

  private void assertAbsent(long id) {
    assertNull(entry(id), () -> id + " still cached: " + cache.snapshot());
  }

  @Test
  void anEntryOutlivesItsLastHolderAndIsReadWithoutDecoding() throws Exception {
    retainingCache(10 * size, 100 * size);
    readOnce(1);

    assertEquals(1, decoder.calls());
    assertRetained(1);
    assertEquals(size, memory.used(), "a retained entry's bytes are in the storage memory");
    assertEquals(1, cache.counters().entriesRetained());
    assertEquals(size, cache.counters().bytesRetained());
    assertEquals(0, cache.counters().entriesHeld());
    assertEquals(0, cache.counters().bytesHeld());

    FakeTask again = openAndRead(1);
    assertEquals(1, decoder.calls(), "a retained entry is read without decoding");
    assertEquals(1, cache.counters().retainedReads());
    assertEquals(0, cache.counters().sharedReads());
    CacheSnapshot.EntryState held = entry(1);
    assertFalse(held.retained(), held::toString);
    assertEquals(1, held.holders());
    assertEquals(0, memory.used(), "a held entry's bytes are its task's, not storage memory's");
    assertEquals(0, cache.counters().bytesRetained());
    assertEquals(1, cache.counters().entriesHeld());
    assertTrue(cache.counters().bytesHeld() >= size);

    again.complete();
    assertRetained(1);
    assertEquals(size, memory.used());
    readOnce(1);
    assertEquals(1, decoder.calls());
    assertEquals(2, cache.counters().retainedReads());
    assertEquals(1, cache.counters().decodes());

    closeAndAssertAllFreed();
    assertEquals(1, cache.counters().closedEvictions());
  }

  @Test
  void withRetentionDisabledTheLastHolderFreesTheEntry() throws Exception {
    readOnce(1);
    assertAbsent(1);
    readOnce(1);
    assertEquals(2, decoder.calls());
    closeAndAssertAllFreed();
  }

  @Test
  void aBroadcastNoLongerLiveIsEvictedAtTheNextOpen() throws Exception {
    retainingCache(10 * size, 100 * size);
    readOnce(1);
    assertRetained(1);

    live.remove(1L);
    assertRetained(1);
    FakeTask other = openAndRead(2);
    assertAbsent(1);
    assertEquals(1, cache.counters().droppedEvictions());
    assertEquals(0, memory.used(), "the evicted entry's storage memory went back");

    other.complete();
    assertRetained(2);
    closeAndAssertAllFreed();
  }

  @Test
  void aBroadcastNoLongerLiveIsEvictedAtTheNextTaskEnd() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask running = openAndRead(2);
    readOnce(1);
    assertRetained(1);

    live.remove(1L);
    running.complete();
    assertAbsent(1);
    assertRetained(2);
    assertEquals(1, cache.counters().droppedEvictions());
    assertEquals(size, memory.used());

    live.add(1L);
    readOnce(1);
    assertEquals(3, decoder.calls(), "a dropped broadcast is decoded again");
    closeAndAssertAllFreed();
  }

  @Test
  void aBroadcastNotLiveWhenItsLastHolderEndsIsNotRetained() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask task = openAndRead(1);
    live.remove(1L);
    task.complete();
    assertAbsent(1);
    assertEquals(0, memory.used());
    assertEquals(0, cache.counters().droppedEvictions(), "never retained, so not evicted");
    closeAndAssertAllFreed();
  }

  @Test
  void dropFreesAnIdleEntryAtOnce() throws Exception {
    retainingCache(10 * size, 100 * size);
    readOnce(1);
    readOnce(2);
    cache.drop(1);
    assertAbsent(1);
    assertRetained(2);
    assertEquals(size, memory.used());
    assertEquals(1, cache.counters().droppedEvictions());
    cache.drop(99);
    closeAndAssertAllFreed();
  }

  @Test
  void dropOfAHeldEntryFreesItAtItsLastHolderInsteadOfRetainingIt() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask holder = openAndRead(1);
    FakeTask second = openAndRead(1);
    cache.drop(1);
    CacheSnapshot.EntryState held = entry(1);
    assertEquals(2, held.holders(), "a held entry is never evicted");

    holder.complete();
    assertEquals(1, entry(1).holders());
    second.complete();
    assertAbsent(1);
    assertEquals(0, memory.used());
    assertEquals(0, cache.counters().droppedEvictions(), "freed by its holder, not evicted");
    assertTrue(live.contains(1L));
    readOnce(1);
    assertEquals(2, decoder.calls());
    closeAndAssertAllFreed();
  }

  @Test
  void theBudgetEvictsTheLeastRecentlyUsedIdleEntryFirst() throws Exception {
    retainingCache(2 * size + size / 2, 100 * size);
    readOnce(1);
    readOnce(2);
    readOnce(1); // 1 is now the more recently used
    assertEquals(2, decoder.calls());

    readOnce(3);
    assertAbsent(2);
    assertRetained(1);
    assertRetained(3);
    assertEquals(1, cache.counters().budgetEvictions());
    assertEquals(2 * size, memory.used());
    assertEquals(2 * size, cache.counters().bytesRetained());

    readOnce(1);
    assertEquals(3, decoder.calls(), "the more recently used entry stayed");
    readOnce(2);
    assertEquals(4, decoder.calls(), "the least recently used one went");
    closeAndAssertAllFreed();
  }

  @Test
  void anEntryLargerThanTheBudgetIsNotRetainedAndEvictsNothing() throws Exception {
    retainingCache(size - 1, 100 * size);
    readOnce(1);
    assertAbsent(1);
    assertEquals(0, cache.counters().budgetEvictions());
    assertEquals(0, memory.used());
    closeAndAssertAllFreed();
  }

  @Test
  void anEntryWhoseBytesTheStorageMemoryRefusesIsNotRetained() throws Exception {
    retainingCache(10 * size, 100 * size);
    assertTrue(memory.tryAcquire(SPARK_BLOCKS, 100 * size - size + 1));
    readOnce(1);
    assertAbsent(1);
    assertEquals(100 * size - size + 1, memory.used(), "nothing acquired for the refused entry");
    readOnce(1);
    assertEquals(2, decoder.calls());

    memory.release(SPARK_BLOCKS, 100 * size - size + 1);
    closeAndAssertAllFreed();
  }

  @Test
  void underPressureIdleEntriesGoLeastRecentlyUsedFirstUntilThePressureIsGone() throws Exception {
    long capacity = 10 * size;
    retainingCache(capacity, capacity);
    readOnce(1);
    readOnce(2);
    assertEquals(2 * size, memory.used());
    assertFalse(memory.underPressure());

    // Spark's blocks leave half an entry free: evicting one entry (1, the older) is enough.
    long sparkBlocks = capacity - 2 * size - size / 2;
    assertTrue(memory.tryAcquire(SPARK_BLOCKS, sparkBlocks));
    assertTrue(memory.underPressure());
    FakeTask reading = openAndRead(3);
    assertAbsent(1);
    assertRetained(2);
    assertEquals(1, cache.counters().pressureEvictions());
    assertFalse(memory.underPressure());

    // At the end of the task, 3 is retained (it fits), the pressure is back, and 2 goes.
    reading.complete();
    assertAbsent(2);
    assertRetained(3);
    assertEquals(2, cache.counters().pressureEvictions());
    assertEquals(sparkBlocks + size, memory.used());

    memory.release(SPARK_BLOCKS, sparkBlocks);
    closeAndAssertAllFreed();
  }

  @Test
  void aHeldEntryIsNeverEvicted() throws Exception {
    long capacity = 10 * size;
    retainingCache(size, capacity);
    FakeTask holder = new FakeTask();
    TestBroadcast one = broadcast(1);
    BroadcastReader reader = cache.open(one, holder, true);
    assertTrue(Consumer.CLOSES_EACH_VIEW.readOne(reader, one, 0, null));

    readOnce(2); // retained: the budget counts idle entries only
    readOnce(3); // evicts 2 for the budget, never 1
    assertEquals(1, cache.counters().budgetEvictions());
    live.remove(1L);
    assertTrue(memory.tryAcquire(SPARK_BLOCKS, capacity - size));
    assertTrue(memory.underPressure());
    // Its open evicts 3 under pressure, its end 4 itself; 1 is not live, but held.
    readOnce(4);
    assertAbsent(3);
    assertAbsent(4);
    assertEquals(2, cache.counters().pressureEvictions());
    cache.drop(1);
    CacheSnapshot.EntryState held = entry(1);
    assertEquals(1, held.holders(), () -> "a held entry went: " + cache.snapshot());

    assertTrue(Consumer.CLOSES_EACH_VIEW.readOne(reader, one, 1, null));
    assertFalse(Consumer.CLOSES_EACH_VIEW.readOne(reader, one, 2, null));
    holder.complete();
    assertAbsent(1);
    assertEquals(capacity - size, memory.used());
    memory.release(SPARK_BLOCKS, capacity - size);
    closeAndAssertAllFreed();
  }

  @Test
  void closeFreesIdleEntriesNowAndHeldOnesWithTheirLastHolder() throws Exception {
    retainingCache(10 * size, 100 * size);
    readOnce(1);
    readOnce(2);
    FakeTask holder = openAndRead(3);
    cache.close();
    assertAbsent(1);
    assertAbsent(2);
    assertEquals(2, cache.counters().closedEvictions());
    assertEquals(0, memory.used());
    assertEquals(1, entry(3).holders());

    holder.complete();
    assertAbsent(3);
    readOnce(3);
    assertAbsent(3);
    assertEquals(4, decoder.calls(), "after close the cache still reads, and retains nothing");
    assertEquals(0, memory.used());
    closeAndAssertAllFreed();
  }

  @Test
  void privateDecodesAreNeverRetained() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask task = new FakeTask();
    Consumer.CLOSES_EACH_VIEW.consume(cache.open(first, task, false), first, null);
    task.complete();
    FakeTask unshared = new FakeTask();
    cache.open(first, decoder.unshareable(), unshared, true);
    unshared.complete();
    assertTrue(cache.snapshot().isEmpty(), () -> cache.snapshot().toString());
    assertEquals(0, memory.used());
    closeAndAssertAllFreed();
  }
}
