package dev.quiver.broadcast;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.InMemoryBroadcast;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuarantee;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The cache's operations, model-checked and stress-tested by Lincheck: tasks that open a broadcast
 * (shared or not; one broadcast's bytes are damaged) and read it, ask for a derived value (one
 * derivation always fails), and complete (each on the thread that opened it, possibly several
 * operations later), interleaved with what an engine and Spark do between tasks (a broadcast
 * dropped, no longer live or live again, storage memory under pressure or not, the retained entries
 * checked, the cache closed).
 *
 * <p>What one task reads is the same however the cache served it (decoded, shared, retained), so
 * the sequential specification ({@link Specification}) is what each task must get: its broadcast's
 * values, or the damaged broadcast's or the failing derivation's error, and no other exception, in
 * every interleaving: the state machines throw on an illegal move, a hold released twice or taken
 * on a freed entry. Lincheck reports a deadlock or a lost wake-up as a hang. After each run {@link
 * #noHoldsNoLeaks()} checks the cache at rest: no holds, gauges that match the entries, the storage
 * memory holding exactly the retained bytes, and, once closed, nothing left in its allocator.
 *
 * <p>So the specification checks only results that do not depend on the interleaving: which entries
 * stay retained, and which task decoded, depend on which tasks overlapped, which no sequential run
 * reproduces; {@link DecodedBroadcastCacheModelTest} checks those one step at a time against a
 * model.
 */
// Public, as Lincheck makes its instances by reflection from another module.
@Tag("model-check")
public class DecodedBroadcastCacheLincheckTest {

  /** Broadcasts 1 and 2 decode; broadcast 3's stream is cut short, so every decode of it fails. */
  private static final int BROADCASTS = 3;

  private static final long DAMAGED = 3;
  private static final int ROWS = 3;

  /**
   * More than the threads Lincheck runs: its parts before and after the parallel one have ids too.
   */
  private static final int THREAD_IDS = 8;

  /** Parent of every run's allocator: each run checks its own is empty, then closes it. */
  static final RootAllocator ROOT = new RootAllocator();

  /** Encodes the broadcasts once; the cache under test decodes them in every run. */
  static final List<InMemoryBroadcast> SOURCES = encodeSources();

  /** The bytes of one decoded entry (both broadcasts have the same shape). */
  static final long ENTRY_BYTES = entryBytes();

  private final BufferAllocator allocator =
      ROOT.newChildAllocator("lincheck-run", 0, Long.MAX_VALUE);
  private final Set<Long> live = ConcurrentHashMap.newKeySet();
  private final BoundedStorageMemory memory = new BoundedStorageMemory(1 << 30);
  private final AtomicBoolean pressure = new AtomicBoolean();

  /** Budget for one entry: a second one retained evicts the first. */
  private final DecodedBroadcastCache cache =
      new DecodedBroadcastCache(
          allocator,
          BroadcastDecoder.arrowIpc(),
          Long.MAX_VALUE,
          Retention.of(ENTRY_BYTES * 3 / 2, switchablePressure(), live::contains));

  /** The tasks each thread has opened and not yet completed. */
  private final List<List<FakeTask>> openTasks = new ArrayList<>();

  public DecodedBroadcastCacheLincheckTest() {
    for (long id = 1; id <= BROADCASTS; id++) {
      live.add(id);
    }
    for (int t = 0; t < THREAD_IDS; t++) {
      openTasks.add(new ArrayList<>());
    }
  }

  /** A task opens broadcast {@code id}, reads every batch, and keeps its hold until completed. */
  @Operation
  public long open(
      @Param(gen = ThreadIdGen.class) int thread, @Param(gen = IntGen.class, conf = "1:3") int id)
      throws IOException {
    return openAndRead(thread, id, true);
  }

  /** The same with sharing off: the task decodes for itself. */
  @Operation
  public long openPrivately(
      @Param(gen = ThreadIdGen.class) int thread, @Param(gen = IntGen.class, conf = "1:3") int id)
      throws IOException {
    return openAndRead(thread, id, false);
  }

  private long openAndRead(int thread, int id, boolean share) throws IOException {
    FakeTask task = FakeTask.tellingOfKills();
    openTasks.get(thread).add(task);
    BroadcastReader reader = cache.open(SOURCES.get(id - 1), task, share);
    return sumOfKeys(reader);
  }

  /** A task opens broadcast {@code id}, asks for its derived sum of keys, and completes. */
  @Operation
  public long derive(@Param(gen = IntGen.class, conf = "1:2") int id) throws IOException {
    FakeTask task = FakeTask.tellingOfKills();
    try {
      BroadcastReader reader = cache.open(SOURCES.get(id - 1), task, true);
      return reader.derived(
          "sum",
          (buildReader, valueAllocator) -> DerivedValue.of(sumOfKeys(buildReader), 8, () -> {}));
    } finally {
      task.complete();
    }
  }

  /**
   * A task opens broadcast {@code id} and asks for a value whose build always fails: the failure is
   * not cached, and each asker builds (and fails) in turn.
   */
  @Operation
  public long deriveFailing(@Param(gen = IntGen.class, conf = "1:2") int id) throws IOException {
    FakeTask task = FakeTask.tellingOfKills();
    try {
      BroadcastReader reader = cache.open(SOURCES.get(id - 1), task, true);
      return reader.<Long>derived(
          "failing",
          (buildReader, valueAllocator) -> {
            throw new IllegalStateException("this derivation always fails");
          });
    } finally {
      task.complete();
    }
  }

  /** Completes the tasks this thread opened (their holds end); returns how many. */
  @Operation
  public int completeTasks(@Param(gen = ThreadIdGen.class) int thread) {
    return complete(openTasks.get(thread));
  }

  /** Completes {@code tasks} (their holds end) and forgets them; returns how many. */
  static int complete(List<FakeTask> tasks) {
    int completed = tasks.size();
    for (FakeTask task : tasks) {
      task.complete();
    }
    tasks.clear();
    return completed;
  }

  /** Spark drops broadcast {@code id} and tells the cache. */
  @Operation
  public void drop(@Param(gen = IntGen.class, conf = "1:2") int id) {
    live.remove((long) id);
    cache.drop(id);
  }

  /** Spark drops broadcast {@code id}; the cache learns at its next check. */
  @Operation
  public void forget(@Param(gen = IntGen.class, conf = "1:2") int id) {
    live.remove((long) id);
  }

  /** Spark's broadcast {@code id} is live again (as a new broadcast reusing the id would be). */
  @Operation
  public void revive(@Param(gen = IntGen.class, conf = "1:2") int id) {
    live.add((long) id);
  }

  /** The storage memory is under pressure, or no longer. */
  @Operation
  public void pressure(boolean on) {
    pressure.set(on);
  }

  @Operation
  public void checkRetained() {
    cache.checkRetained();
  }

  @Operation
  public void close() {
    cache.close();
  }

  /** The cache at rest, every task completed: its holds, gauges, memory and, closed, no bytes. */
  @Validate
  public void noHoldsNoLeaks() {
    for (int t = 0; t < openTasks.size(); t++) {
      completeTasks(t);
    }
    // What an engine does between tasks: no broadcast Spark dropped stays retained past it.
    cache.checkRetained();
    checkAtRest(cache, live, memory.used());
    cache.close();
    check(allocator.getAllocatedMemory() == 0, "bytes left: " + allocator.getAllocatedMemory());
    check(memory.used() == 0, "storage memory left: " + memory.used());
    allocator.close();
  }

  /**
   * {@code cache} with no holder: every entry retained, of a live broadcast, the gauges matching
   * the entries, and {@code storageUsed} (the storage memory its entries take) their bytes.
   */
  static void checkAtRest(DecodedBroadcastCache cache, Set<Long> live, long storageUsed) {
    CacheCounters counters = cache.counters();
    long retainedBytes = 0;
    Set<Long> retainedIds = new HashSet<>();
    for (CacheSnapshot.EntryState entry : cache.snapshot().entries()) {
      check(entry.holders() == 0, "a hold outlived its task or release: " + entry);
      check(entry.retained(), "an entry nobody holds is not retained: " + entry);
      check(live.contains(entry.broadcastId()), "a dropped broadcast is retained: " + entry);
      retainedBytes += entry.bytes();
      retainedIds.add(entry.broadcastId());
    }
    check(counters.entriesHeld() == 0, "entries held: " + counters.entriesHeld());
    check(
        counters.entriesRetained() == retainedIds.size(),
        "retained gauge " + counters.entriesRetained() + " for " + retainedIds);
    check(
        counters.bytesRetained() == retainedBytes && storageUsed == retainedBytes,
        "retained bytes: gauge "
            + counters.bytesRetained()
            + ", storage memory "
            + storageUsed
            + ", entries "
            + retainedBytes);
  }

  @Test
  void linearizableUnderModelChecking() {
    modelChecking(Specification.class, 8, 100).check(getClass());
  }

  @Test
  void linearizableUnderStress() {
    stress(Specification.class, 10, 300).check(getClass());
  }

  /**
   * What each operation returns when run one at a time, without a cache: a task reads its
   * broadcast's keys (or their derived sum) whatever else happens, and completing a thread's tasks
   * completes those it opened. Anything else the cache does, an exception included, differs.
   */
  public static final class Specification {
    private final int[] openTasks = new int[THREAD_IDS];

    public long open(int thread, int id) throws Exception {
      openTasks[thread]++;
      return expectedSum(id);
    }

    public long openPrivately(int thread, int id) throws Exception {
      return open(thread, id);
    }

    public long deriveFailing(int id) {
      throw new IllegalStateException("this derivation always fails");
    }

    public void revive(int id) {}

    public void pressure(boolean on) {}

    public long derive(int id) throws Exception {
      return expectedSum(id);
    }

    public int completeTasks(int thread) {
      int completed = openTasks[thread];
      openTasks[thread] = 0;
      return completed;
    }

    public void drop(int id) {}

    public void forget(int id) {}

    public void checkRetained() {}

    public void close() {}

    static long expectedSum(int id) throws Exception {
      if (id == DAMAGED) {
        // What decoding the damaged broadcast throws, made afresh.
        throw decodeFailure();
      }
      long sum = 0;
      for (TestBroadcast.ExpectedBatch batch : ((TestBroadcast) SOURCES.get(id - 1)).batches()) {
        for (long key = batch.firstKey; key < batch.firstKey + batch.rows; key++) {
          sum += key;
        }
      }
      return sum;
    }
  }

  /**
   * Model checking of {@code specification} against the cache in the scenarios both cache checks
   * run: two threads of three operations, one before them and one after, with what lies outside the
   * cache atomic.
   */
  static ModelCheckingOptions modelChecking(
      Class<?> specification, int iterations, int invocationsPerIteration) {
    return new ModelCheckingOptions()
        .sequentialSpecification(specification)
        .iterations(iterations)
        .invocationsPerIteration(invocationsPerIteration)
        .threads(2)
        .actorsPerThread(3)
        .actorsBefore(1)
        .actorsAfter(1)
        .addGuarantee(atomicOutsideTheCache());
  }

  /**
   * Stress runs of {@code specification} in the scenarios of {@link #modelChecking}, on three
   * threads.
   */
  static StressOptions stress(Class<?> specification, int iterations, int invocationsPerIteration) {
    return new StressOptions()
        .sequentialSpecification(specification)
        .iterations(iterations)
        .invocationsPerIteration(invocationsPerIteration)
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(1)
        .actorsAfter(1);
  }

  /**
   * Arrow, the IPC decode and logging run as single steps: what is checked is how the cache
   * interleaves (the fake task's completion, which releases holds, included), and switching threads
   * inside them only multiplies the runs.
   */
  static ManagedStrategyGuarantee atomicOutsideTheCache() {
    return ManagedStrategyGuaranteeKt.forClasses(
            name ->
                name.startsWith("org.apache.arrow.")
                    || name.startsWith("dev.quiver.ipc.")
                    || name.startsWith("dev.quiver.codec.")
                    || name.startsWith("dev.quiver.io.")
                    || name.startsWith("dev.quiver.testing.LogCapture")
                    || name.startsWith("org.slf4j."))
        .allMethods()
        .treatAsAtomic();
  }

  static long sumOfKeys(BroadcastReader reader) {
    long sum = 0;
    while (reader.next()) {
      VectorSchemaRoot view = reader.current();
      BigIntVector keys = (BigIntVector) view.getVector(0);
      for (int i = 0; i < view.getRowCount(); i++) {
        sum += keys.get(i);
      }
    }
    return sum;
  }

  private static long entryBytes() {
    try (BufferAllocator probe = ROOT.newChildAllocator("probe", 0, Long.MAX_VALUE)) {
      DecodedBroadcast decoded = BroadcastDecoder.arrowIpc().decode(SOURCES.get(0), probe);
      long bytes = probe.getAllocatedMemory();
      decoded.close();
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<InMemoryBroadcast> encodeSources() {
    List<InMemoryBroadcast> sources = new ArrayList<>();
    try (BufferAllocator encoding = ROOT.newChildAllocator("encode", 0, Long.MAX_VALUE)) {
      for (long id = 1; id < DAMAGED; id++) {
        sources.add(
            TestBroadcast.encode(
                id, TestBroadcast.Shape.BUILD_SIDE, StreamCodec.NONE, encoding, new int[] {ROWS}));
      }
      byte[] whole = sources.get(0).streamBytes(0);
      sources.add(
          new InMemoryBroadcast(
              DAMAGED,
              StreamCodec.NONE,
              List.of(Arrays.copyOf(whole, whole.length / 2)),
              /* lengthsKnown= */ true));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return sources;
  }

  private static Exception decodeFailure() {
    try (BufferAllocator probe = ROOT.newChildAllocator("damaged", 0, Long.MAX_VALUE)) {
      BroadcastDecoder.arrowIpc().decode(SOURCES.get((int) DAMAGED - 1), probe).close();
    } catch (IOException | RuntimeException e) {
      return e;
    }
    throw new AssertionError("the damaged broadcast decoded");
  }

  /** The test's storage memory, under pressure while {@link #pressure(boolean)} says so. */
  private StorageMemory switchablePressure() {
    return new StorageMemory() {
      @Override
      public boolean tryAcquire(long broadcastId, long bytes, MemoryLocation location) {
        return memory.tryAcquire(broadcastId, bytes, location);
      }

      @Override
      public void release(long broadcastId, long bytes, MemoryLocation location) {
        memory.release(broadcastId, bytes, location);
      }

      @Override
      public boolean underPressure() {
        return pressure.get();
      }
    };
  }

  static void check(boolean condition, String what) {
    if (!condition) {
      throw new IllegalStateException(what);
    }
  }
}
