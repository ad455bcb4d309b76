package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static dev.quiver.broadcast.CacheTestSupport.killWaiter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.KeyTableDerivation.KeyTable;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Values derived from a cached broadcast ({@link BroadcastReader#derived}): built once per entry
 * and key for concurrent and later tasks, failed builds retried, killed waiters stopped, values
 * freed with their entry in every way an entry goes, and their bytes counted as the entry's.
 */
class DerivedValuesTest extends RetentionTestBase {

  private static final String KEY = "keys of broadcast 1";
  private static final long HEAP_BYTES = 10_000;

  private KeyTableDerivation derivation;

  @BeforeEach
  void newDerivation() {
    derivation = new KeyTableDerivation(first, HEAP_BYTES);
  }

  @AfterEach
  void releaseTheBuilds() {
    derivation.releaseAll();
  }

  /** Opens {@code id} (shared) for {@code task} and reads it all; the task still holds it. */
  private BroadcastReader openAndRead(long id, FakeTask task) throws Exception {
    TestBroadcast broadcast = first.withId(id);
    BroadcastReader reader = cache.open(broadcast, task, true);
    Consumer.CLOSES_EACH_VIEW.consume(reader, broadcast, null);
    return reader;
  }

  /** One task that reads {@code id}, asks for its key table, checks it and completes. */
  private KeyTable deriveOnce(long id, KeyTableDerivation with) throws Exception {
    FakeTask task = new FakeTask();
    KeyTable table = checked(openAndRead(id, task).derived(KEY, with));
    task.complete();
    return table;
  }

  /**
   * {@link #deriveOnce} without looking at the table: it may go with its entry when the task
   * completes.
   */
  private void deriveUnchecked(long id, KeyTableDerivation with) throws Exception {
    FakeTask task = new FakeTask();
    openAndRead(id, task).derived(KEY, with);
    task.complete();
  }

  /** {@code table} holds every key of the test broadcasts (all of {@code first}'s), in order. */
  private static KeyTable checked(KeyTable table) {
    assertEquals(700, table.rows);
    for (long row = 0; row < table.rows; row++) {
      assertEquals(1_000_000L + row, table.key(row));
    }
    return table;
  }

  /** What entry allocator {@code name} has under it: the allocators of its derived values. */
  private List<String> valueAllocatorsOf(String name) {
    List<String> names = new ArrayList<>();
    for (BufferAllocator entryAllocator : allocator.getChildAllocators()) {
      if (entryAllocator.getName().equals(name)) {
        for (BufferAllocator value : entryAllocator.getChildAllocators()) {
          names.add(value.getName());
        }
        return names;
      }
    }
    throw new AssertionError("no allocator " + name);
  }

  /** The end of each test: as {@link #closeAndAssertAllFreed()}, and every value released. */
  private void closeAndAssertAllFreed(KeyTableDerivation... derivations) {
    closeAndAssertAllFreed();
    for (KeyTableDerivation d : derivations) {
      assertEquals(d.builds() - d.failures(), d.releases(), "a value built and not released");
    }
  }

  @Test
  void manyConcurrentTasksShareOneBuild() throws Exception {
    int tasks = 8;
    List<FakeTask> running = new ArrayList<>();
    List<BroadcastReader> readers = new ArrayList<>();
    for (int i = 0; i < tasks; i++) {
      FakeTask task = new FakeTask();
      running.add(task);
      readers.add(openAndRead(1, task));
    }
    assertEquals(0, cache.counters().waits(), "the opens did not overlap a decode");
    Gate gate = derivation.blockBuild(1);
    List<Callable<KeyTable>> asks = new ArrayList<>();
    for (BroadcastReader reader : readers) {
      asks.add(() -> reader.derived(KEY, derivation));
    }
    List<Future<KeyTable>> asked = together(asks);
    gate.awaitEntered();
    // Every other task arrives while the build is blocked, and waits.
    awaitCondition("the other tasks wait", () -> cache.counters().waits() == tasks - 1);
    assertEquals(1, derivation.builds(), "a waiter built");
    gate.release();

    KeyTable table = checked(asked.get(0).get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    for (Future<KeyTable> other : asked) {
      assertSame(table, other.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    }
    assertEquals(1, derivation.builds());
    assertEquals(1, cache.counters().derivedBuilds());
    assertEquals(tasks - 1, cache.counters().derivedReuses());
    assertEquals(0, cache.counters().failedDerivations());
    assertEquals(tasks, entry(1).holders(), "the extra holds of builder and waiters ended");
    assertEquals(1, decoder.calls());

    for (int i = 0; i < tasks - 1; i++) {
      running.get(i).complete();
      assertEquals(0, derivation.releases(), "released while a task holds its entry");
    }
    running.get(tasks - 1).complete();
    assertEquals(1, derivation.releases(), "the last holder frees the value with its entry");
    assertNull(entry(1));
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void laterTasksReuseTheValueOfARetainedEntry() throws Exception {
    retainingCache(100 * size, 1000 * size);
    KeyTable built = deriveOnce(1, derivation);
    for (int i = 0; i < 3; i++) {
      assertSame(built, deriveOnce(1, derivation), "a later task built again");
    }
    assertEquals(1, derivation.builds());
    assertEquals(3, cache.counters().derivedReuses());
    assertEquals(3, cache.counters().retainedReads());
    assertEquals(1, decoder.calls());
    assertEquals(0, derivation.releases());

    FakeTask again = new FakeTask();
    BroadcastReader reader = openAndRead(1, again);
    assertSame(built, reader.derived(KEY, derivation), "the same task asking again");
    assertSame(built, reader.derived(KEY, derivation));
    again.complete();
    assertEquals(5, cache.counters().derivedReuses());
    closeAndAssertAllFreed(derivation);
    assertEquals(1, derivation.releases());
  }

  @Test
  void aFailedBuildIsNotCachedLeavesNothingAndTheNextTaskBuilds() throws Exception {
    retainingCache(100 * size, 1000 * size);
    derivation.failBuild(1);
    FakeTask failing = new FakeTask();
    BroadcastReader reader = openAndRead(1, failing);
    KeyTableDerivation.BuildFailure failure =
        assertThrows(KeyTableDerivation.BuildFailure.class, () -> reader.derived(KEY, derivation));
    assertEquals("injected failure of build 1", failure.getMessage());
    assertEquals(1, cache.counters().failedDerivations());
    assertEquals(0, cache.counters().derivedBuilds());
    assertEquals(size, entry(1).bytes(), "the failed build left bytes in its entry");
    assertEquals(List.of(), valueAllocatorsOf("broadcast-1"), "the failed build's allocator");
    assertEquals(1, entry(1).holders(), "the failed build's extra hold stayed");

    // The same task may ask again: the failure was not cached.
    KeyTable retried = checked(reader.derived(KEY, derivation));
    assertEquals(2, retried.build);
    assertEquals(List.of("broadcast-1-derived-1"), valueAllocatorsOf("broadcast-1"));
    failing.complete();
    assertEquals(size + retried.arrowBytes + HEAP_BYTES, entry(1).bytes());

    derivation.failBuild(3);
    KeyTableDerivation other = new KeyTableDerivation(first, HEAP_BYTES).failBuild(1);
    FakeTask next = new FakeTask();
    BroadcastReader nextReader = openAndRead(1, next);
    assertThrows(
        KeyTableDerivation.BuildFailure.class, () -> nextReader.derived("other key", other));
    assertSame(retried, nextReader.derived(KEY, derivation), "a failure of one key spoils another");
    next.complete();
    assertEquals(2, cache.counters().failedDerivations());
    assertEquals(size + retried.arrowBytes + HEAP_BYTES, entry(1).bytes());

    assertEquals(2, deriveOnce(1, other).build, "the next task builds the failed key");
    closeAndAssertAllFreed(derivation, other);
  }

  @Test
  void whenABuildFailsItsWaitersTryAgainAndOneOfThemBuilds() throws Exception {
    int waiters = 4;
    derivation.failBuild(1);
    Gate gate = derivation.blockBuild(1);
    FakeTask builder = new FakeTask();
    BroadcastReader builderReader = openAndRead(1, builder);
    Future<KeyTable> failed = executor.submit(() -> builderReader.derived(KEY, derivation));
    gate.awaitEntered();
    List<FakeTask> tasks = new ArrayList<>();
    List<Future<KeyTable>> asked = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      FakeTask task = new FakeTask();
      tasks.add(task);
      BroadcastReader reader = openAndRead(1, task);
      asked.add(executor.submit(() -> reader.derived(KEY, derivation)));
    }
    awaitCondition("the tasks wait", () -> cache.counters().waits() == waiters);
    gate.release();

    ExecutionException thrown =
        assertThrows(ExecutionException.class, () -> failed.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(KeyTableDerivation.BuildFailure.class, thrown.getCause());
    KeyTable table = checked(asked.get(0).get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    assertEquals(2, table.build, "built by one of the waiters");
    for (Future<KeyTable> other : asked) {
      assertSame(table, other.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    }
    assertEquals(2, derivation.builds());
    assertEquals(1, cache.counters().failedDerivations());
    assertEquals(1, cache.counters().derivedBuilds());
    assertEquals(waiters - 1, cache.counters().derivedReuses());
    assertEquals(size + table.arrowBytes + HEAP_BYTES, entry(1).bytes());
    assertEquals(1, valueAllocatorsOf("broadcast-1").size(), "the failed build's allocator");

    builder.complete();
    for (FakeTask task : tasks) {
      task.complete();
    }
    assertEquals(1, derivation.releases());
    closeAndAssertAllFreed(derivation);
  }

  @ToldOfKillsOrNot
  void aWaiterKilledWhileWaitingStopsAndTheBuilderStillCompletes(boolean tellsOfKills)
      throws Exception {
    Gate gate = derivation.blockBuild(1);
    FakeTask builder = new FakeTask();
    FakeTask waiter = tellsOfKills ? FakeTask.tellingOfKills() : new FakeTask();
    BroadcastReader builderReader = openAndRead(1, builder);
    BroadcastReader waiterReader = openAndRead(1, waiter);
    Future<KeyTable> built = executor.submit(() -> builderReader.derived(KEY, derivation));
    gate.awaitEntered();
    Future<KeyTable> waited = executor.submit(() -> waiterReader.derived(KEY, derivation));
    awaitCondition("the second task waits", () -> cache.counters().waits() == 1);

    killWaiter(waiter, tellsOfKills, waited);
    assertFalse(built.isDone(), "the build should still be blocked");
    // The builder holds twice (its task and its build), the killed waiter once (its task).
    assertEquals(3, entry(1).holders(), "the killed waiter's extra hold did not end");
    waiter.complete();
    assertEquals(2, entry(1).holders());

    gate.release();
    KeyTable table = checked(built.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    assertEquals(1, cache.counters().derivedBuilds());
    assertEquals(0, cache.counters().derivedReuses());
    assertEquals(size + table.arrowBytes + HEAP_BYTES, entry(1).bytes());
    builder.complete();
    assertEquals(1, derivation.releases());
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void theEntryCannotGoUnderABuildWhoseTaskCompletesMeanwhile() throws Exception {
    Gate gate = derivation.blockBuild(1);
    FakeTask builder = new FakeTask();
    BroadcastReader reader = openAndRead(1, builder);
    Future<KeyTable> built = executor.submit(() -> reader.derived(KEY, derivation));
    gate.awaitEntered();
    builder.complete();
    assertEquals(1, entry(1).holders(), "the build's own hold keeps the entry");
    gate.release();
    // The task is over: the value it gets back is already freed, with its entry.
    assertEquals(1, built.get(TIMEOUT_SECONDS, TimeUnit.SECONDS).build);
    assertNull(entry(1), "freed once the build's hold ended");
    assertEquals(1, derivation.releases());
    assertThrows(IllegalStateException.class, () -> reader.derived(KEY, derivation));
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void separateKeysAreSeparateValuesFreedWithTheirEntry() throws Exception {
    retainingCache(100 * size, 1000 * size);
    KeyTableDerivation second = new KeyTableDerivation(first, 3 * HEAP_BYTES);
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAndRead(1, task);
    KeyTable one = checked(reader.derived(KEY, derivation));
    KeyTable two = checked(reader.derived(List.of("k", 2), second));
    assertNotSame(one, two);
    assertSame(two, reader.derived(List.of("k", 2), second), "keys compare by equals");
    assertEquals(2, cache.counters().derivedBuilds());
    assertEquals(1, cache.counters().derivedReuses());
    task.complete();
    long bytes = size + one.arrowBytes + two.arrowBytes + 4 * HEAP_BYTES;
    assertEquals(bytes, entry(1).bytes());
    assertEquals(bytes, memory.used());

    // Another entry's value under the same key is its own.
    KeyTableDerivation ofTwo = new KeyTableDerivation(first.withId(2), HEAP_BYTES);
    KeyTable other = deriveOnce(2, ofTwo);
    assertNotSame(one, other);
    assertEquals(1, ofTwo.builds());

    cache.drop(1);
    assertEquals(1, derivation.releases());
    assertEquals(1, second.releases());
    assertEquals(0, ofTwo.releases());
    closeAndAssertAllFreed(derivation, second, ofTwo);
  }

  @Test
  void heapBytesCountAsTheEntrysBytesWhileHeldAndRetained() throws Exception {
    retainingCache(100 * size, 1000 * size);
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAndRead(1, task);
    assertEquals(size, cache.counters().bytesHeld());
    KeyTable table = reader.derived(KEY, derivation);
    long bytes = size + table.arrowBytes + HEAP_BYTES;
    assertTrue(table.arrowBytes >= 700 * Long.BYTES, "the table's buffer is the entry's");
    assertEquals(bytes, entry(1).bytes());
    assertEquals(bytes, cache.counters().bytesHeld());
    assertEquals(0, memory.used());

    task.complete();
    assertTrue(entry(1).retained());
    assertEquals(bytes, entry(1).bytes());
    assertEquals(bytes, cache.counters().bytesRetained());
    assertEquals(bytes, memory.used());
    assertEquals(0, cache.counters().bytesHeld());
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void aValueBuiltWhileARetainedEntryIsHeldAgainIsAcquiredWhenItIsIdleAgain() throws Exception {
    retainingCache(100 * size, 1000 * size);
    FakeTask reads = new FakeTask();
    openAndRead(1, reads);
    reads.complete();
    assertEquals(size, memory.used());

    FakeTask derives = new FakeTask();
    KeyTable table = openAndRead(1, derives).derived(KEY, derivation);
    assertEquals(0, memory.used(), "held again: its bytes are the task's");
    derives.complete();
    long bytes = size + table.arrowBytes + HEAP_BYTES;
    assertEquals(bytes, memory.used(), "acquired from its bytes when it became idle again");
    assertEquals(bytes, cache.counters().bytesRetained());

    FakeTask reuses = new FakeTask();
    assertSame(table, openAndRead(1, reuses).derived(KEY, derivation));
    assertEquals(0, memory.used(), "released what was acquired");
    reuses.complete();
    assertEquals(bytes, memory.used());
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void aValueThatPushesItsEntryOverTheBudgetMakesItNotRetained() throws Exception {
    retainingCache(2 * size, 1000 * size);
    KeyTableDerivation big = new KeyTableDerivation(first, 2 * size);
    deriveUnchecked(1, big);
    assertNull(entry(1), "retained over its budget");
    assertEquals(1, big.releases());
    assertEquals(0, memory.used());
    assertEquals(0, cache.counters().budgetEvictions());

    // One that fits the budget, but not the storage memory, is not retained either.
    retainingCache(100 * size, 2 * size);
    deriveUnchecked(1, big);
    assertNull(entry(1), "retained over the storage memory");
    assertEquals(2, big.releases());
    closeAndAssertAllFreed(big);
  }

  @Test
  void theBudgetEvictsAnEntryWithItsValues() throws Exception {
    retainingCache(size + 2 * HEAP_BYTES, 1000 * size);
    KeyTable table = deriveOnce(1, derivation);
    long bytes = size + table.arrowBytes + HEAP_BYTES;
    assertEquals(bytes, memory.used());
    deriveOnce(2, new KeyTableDerivation(first.withId(2), 0));
    assertNull(entry(1), "the least recently used entry stayed");
    assertEquals(1, cache.counters().budgetEvictions());
    assertEquals(1, derivation.releases());
    assertEquals(memory.used(), entry(2).bytes());
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void pressureDropAndCloseEvictEntriesWithTheirValues() throws Exception {
    long capacity = 100 * size;
    retainingCache(capacity, capacity);
    KeyTableDerivation one = derivation;
    KeyTableDerivation two = new KeyTableDerivation(first.withId(2), HEAP_BYTES);
    KeyTableDerivation three = new KeyTableDerivation(first.withId(3), HEAP_BYTES);
    KeyTableDerivation four = new KeyTableDerivation(first.withId(4), HEAP_BYTES);
    deriveOnce(1, one);
    deriveOnce(2, two);
    deriveOnce(3, three);
    deriveOnce(4, four);

    cache.drop(2);
    assertEquals(1, two.releases(), "dropped");
    live.remove(3L);
    cache.checkRetained();
    assertEquals(1, three.releases(), "no longer live");
    // Just under the pressure line: evicting one entry is enough.
    long sparkBlocks = sparkBlocksLeaving(capacity / 10 - 1);
    cache.checkRetained();
    assertEquals(1, one.releases(), "under pressure, least recently used first");
    assertEquals(0, four.releases());
    assertEquals(1, cache.counters().pressureEvictions());
    memory.release(-1, sparkBlocks);

    FakeTask holder = new FakeTask();
    KeyTable held = openAndRead(4, holder).derived(KEY, four);
    cache.close();
    assertEquals(0, four.releases(), "closed while a task holds its entry");
    holder.complete();
    assertEquals(1, four.releases());
    assertEquals(1, held.build);
    closeAndAssertAllFreed(one, two, three, four);
  }

  @Test
  void closeReleasesIdleEntriesValues() throws Exception {
    retainingCache(100 * size, 1000 * size);
    deriveOnce(1, derivation);
    assertEquals(0, derivation.releases());
    cache.close();
    assertEquals(1, derivation.releases());
    assertEquals(1, cache.counters().closedEvictions());
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void privateEntriesBuildForTheirTaskAlone() throws Exception {
    retainingCache(100 * size, 1000 * size);
    FakeTask a = new FakeTask();
    FakeTask b = new FakeTask();
    BroadcastReader readerA = cache.open(first, a, false);
    BroadcastReader readerB = cache.open(first, b, false);
    KeyTable tableA = checked(readerA.derived(KEY, derivation));
    KeyTable tableB = checked(readerB.derived(KEY, derivation));
    assertNotSame(tableA, tableB);
    assertSame(tableA, readerA.derived(KEY, derivation), "within its task it is reused");
    assertEquals(2, cache.counters().derivedBuilds());
    assertEquals(1, cache.counters().derivedReuses());
    assertEquals(
        2 * (size + tableA.arrowBytes + HEAP_BYTES),
        cache.counters().bytesHeld(),
        "private values' heap bytes are held");

    a.complete();
    assertEquals(1, derivation.releases(), "freed with its task's private entry");
    b.complete();
    assertEquals(2, derivation.releases());
    assertEquals(0, memory.used(), "private entries are never retained");
    closeAndAssertAllFreed(derivation);
  }

  @Test
  void aDerivationCannotAskForAnotherValueAndAReaderMustBeOpen() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAndRead(1, task);
    Derivation<KeyTable> nested =
        (buildReader, own) ->
            DerivedValue.of(buildReader.derived("inner", derivation), 0, () -> {});
    assertThrows(IllegalStateException.class, () -> reader.derived("outer", nested));
    assertEquals(1, cache.counters().failedDerivations());
    assertThrows(NullPointerException.class, () -> reader.derived(null, derivation));
    task.complete();
    assertThrows(IllegalStateException.class, () -> reader.derived(KEY, derivation));
    closeAndAssertAllFreed(derivation);
  }
}
