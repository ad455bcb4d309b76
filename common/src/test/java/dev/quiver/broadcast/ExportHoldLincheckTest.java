package dev.quiver.broadcast;

import static dev.quiver.broadcast.DecodedBroadcastCacheLincheckTest.ENTRY_BYTES;
import static dev.quiver.broadcast.DecodedBroadcastCacheLincheckTest.ROOT;
import static dev.quiver.broadcast.DecodedBroadcastCacheLincheckTest.SOURCES;
import static dev.quiver.broadcast.DecodedBroadcastCacheLincheckTest.check;

import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The export and hold path under Lincheck, model-checked and stress-tested: tasks that open a
 * broadcast, take a {@link BroadcastHold} for a consumer and export their batch through an {@link
 * ExportLease} (the lease's buffers retained as Arrow's C Data exporter retains them, plus memory
 * the exporter allocates in the lease's allocator), consumers that release what they were given on
 * any thread, in either order, before or after the task ends, interleaved with the task's
 * completion, Spark dropping the broadcast, storage memory pressure (evicting idle entries) and the
 * cache's close. The lease's own pieces are driven as {@link CDataExport} drives them; no native
 * code runs, so Lincheck sees every step of the hold and lease bookkeeping.
 *
 * <p>Each operation checks as it goes that what a consumer holds is intact (the entry's decoded
 * bytes still allocated, the exported keys still the broadcast's) and returns the broadcast's keys
 * or nothing, whatever the interleaving ({@link Specification}); an illegal move of an entry, a
 * release of a freed entry or a hold on one throws and fails the run. {@link #allReleased()} then
 * releases what is left and checks the cache at rest: no hold open, no double release, no entry
 * held, the storage memory holding exactly the retained entries' bytes (and Spark's), and after the
 * close nothing in the allocator.
 *
 * <p>Mutations this test catches (each tried by hand, then reverted): (1) {@code
 * ExportLease.endIfDone} that closes the lease's allocator but not its hold: the last release no
 * longer ends the hold, and {@link #allReleased()} finds a hold open and the entry held; (2) {@code
 * DecodedBroadcastCache.drop} that frees an entry consumers alone still hold: the entry's allocator
 * refuses to close under the lease's, the consumer's check finds the decoded bytes gone, and the
 * last release moves a released entry. Both modes catch both; the model check's six short
 * iterations (rather than fewer, longer ones) are what let it meet the second, which needs an
 * export past its task and a drop of the same broadcast in one scenario.
 */
// Public, as Lincheck makes its instances by reflection from another module.
@Tag("model-check")
public class ExportHoldLincheckTest {

  private static final int THREAD_IDS = 8;

  /** Storage memory with room for many entries; Spark's blocks take most of it under pressure. */
  private static final long CAPACITY = 100 * ENTRY_BYTES;

  private static final long SPARK_BLOCKS = 95 * ENTRY_BYTES;

  /** What the exporter allocates per export in the lease's allocator (its private data). */
  private static final int EXPORTER_BYTES = 64;

  private final BufferAllocator allocator =
      ROOT.newChildAllocator("lincheck-export", 0, Long.MAX_VALUE);
  private final Set<Long> live = ConcurrentHashMap.newKeySet();
  private final BoundedStorageMemory memory = new BoundedStorageMemory(CAPACITY);

  /** Guarded by this: whether Spark's blocks are in the storage memory. */
  private boolean pressure;

  /** Both broadcasts fit the budget: only a drop, pressure or the close evicts. */
  private final DecodedBroadcastCache cache =
      new DecodedBroadcastCache(
          allocator,
          BroadcastDecoder.arrowIpc(),
          Long.MAX_VALUE,
          Retention.of(ENTRY_BYTES * 3, memory, live::contains));

  private final List<List<FakeTask>> openTasks = new ArrayList<>();

  /** What consumers hold, released by whichever thread comes next. */
  private final Queue<Export> exports = new ConcurrentLinkedQueue<>();

  public ExportHoldLincheckTest() {
    live.add(1L);
    live.add(2L);
    for (int t = 0; t < THREAD_IDS; t++) {
      openTasks.add(new ArrayList<>());
    }
  }

  /**
   * A task opens broadcast {@code id}, holds it for a consumer and exports its batch to it; the
   * task stays open until its thread completes it. Returns the keys' sum the consumer reads.
   */
  @Operation
  public long export(
      @Param(gen = ThreadIdGen.class) int thread, @Param(gen = IntGen.class, conf = "1:2") int id)
      throws IOException {
    FakeTask task = FakeTask.tellingOfKills();
    openTasks.get(thread).add(task);
    return exportFrom(task, id);
  }

  /**
   * The same, and the task ends at once: the consumer alone holds what was exported, as a native
   * engine's hash table outlives the task that built it.
   */
  @Operation
  public long exportPastTask(@Param(gen = IntGen.class, conf = "1:2") int id) throws IOException {
    FakeTask task = FakeTask.tellingOfKills();
    try {
      return exportFrom(task, id);
    } finally {
      task.complete();
    }
  }

  private long exportFrom(FakeTask task, int id) throws IOException {
    BroadcastReader reader = cache.open(SOURCES.get(id - 1), task, true);
    check(reader.next(), "broadcast " + id + " has no batch");
    BroadcastHold hold = reader.hold("consumer of task " + task.attemptId());
    ExportLease lease = reader.pinExportLease("native");
    Export export;
    try (ArrowRecordBatch leased = lease.lease(reader.currentBatch())) {
      List<ArrowBuf> given = new ArrayList<>();
      for (ArrowBuf buffer : leased.getBuffers()) {
        given.add(buffer.getReferenceManager().retain(buffer, lease.allocator()));
      }
      ArrowBuf exporterMemory = lease.allocator().buffer(EXPORTER_BYTES);
      export =
          new Export(id, leased.getLength(), hold, given, exporterMemory, reader.viewAllocator());
    } finally {
      lease.unpin();
    }
    // Read before the export is out: from then on any thread may release it.
    long keys = export.keySum();
    exports.add(export);
    return keys;
  }

  /** A consumer releases the oldest export still out: its hold first, or its buffers first. */
  @Operation
  public void release(boolean holdFirst) throws Exception {
    Export export = exports.poll();
    if (export != null) {
      export.release(holdFirst);
    }
  }

  /** Completes the tasks this thread opened; returns how many. */
  @Operation
  public int completeTasks(@Param(gen = ThreadIdGen.class) int thread) {
    return DecodedBroadcastCacheLincheckTest.complete(openTasks.get(thread));
  }

  /** Spark drops broadcast {@code id} and tells the cache. */
  @Operation
  public void drop(@Param(gen = IntGen.class, conf = "1:2") int id) {
    live.remove((long) id);
    cache.drop(id);
  }

  /** Spark's blocks fill the storage memory (or leave it), and the cache checks its entries. */
  @Operation
  public void pressure(boolean on) {
    synchronized (this) {
      if (on && !pressure) {
        check(memory.tryAcquire(-1, SPARK_BLOCKS), "no room for Spark's blocks");
      } else if (!on && pressure) {
        memory.release(-1, SPARK_BLOCKS);
      }
      pressure = on;
    }
    cache.checkRetained();
  }

  @Operation
  public void closeCache() {
    cache.close();
  }

  /** Everything released, every task completed: the cache at rest, then closed and empty. */
  @Validate
  public void allReleased() throws Exception {
    for (Export export = exports.poll(); export != null; export = exports.poll()) {
      export.release(false);
    }
    for (int t = 0; t < THREAD_IDS; t++) {
      completeTasks(t);
    }
    cache.checkRetained();
    check(cache.outstandingHolds().isEmpty(), "holds still open: " + cache.outstandingHolds());
    check(
        cache.counters().doubleReleases() == 0,
        "double releases: " + cache.counters().doubleReleases());
    long spark = pressure ? SPARK_BLOCKS : 0;
    DecodedBroadcastCacheLincheckTest.checkAtRest(cache, live, memory.used() - spark);
    cache.close();
    check(allocator.getAllocatedMemory() == 0, "bytes left: " + allocator.getAllocatedMemory());
    check(memory.used() == spark, "storage memory left: " + (memory.used() - spark));
    allocator.close();
  }

  @Test
  void linearizableUnderModelChecking() {
    DecodedBroadcastCacheLincheckTest.modelChecking(Specification.class, 6, 15).check(getClass());
  }

  @Test
  void linearizableUnderStress() {
    DecodedBroadcastCacheLincheckTest.stress(Specification.class, 8, 200).check(getClass());
  }

  /**
   * One at a time, without a cache: an export reads its broadcast's keys whatever else happened,
   * and completing a thread's tasks completes those it opened.
   */
  public static final class Specification {
    private final int[] openTasks = new int[THREAD_IDS];

    public long export(int thread, int id) throws Exception {
      openTasks[thread]++;
      return DecodedBroadcastCacheLincheckTest.Specification.expectedSum(id);
    }

    public long exportPastTask(int id) throws Exception {
      return DecodedBroadcastCacheLincheckTest.Specification.expectedSum(id);
    }

    public void release(boolean holdFirst) {}

    public int completeTasks(int thread) {
      int completed = openTasks[thread];
      openTasks[thread] = 0;
      return completed;
    }

    public void drop(int id) {}

    public void pressure(boolean on) {}

    public void closeCache() {}
  }

  /**
   * What one consumer was given: a hold, the batch's buffers as the exporter retained them, and the
   * exporter's own memory. The keys are the batch's first column (validity, then values).
   */
  private static final class Export {
    private final int id;
    private final int rows;
    private final BroadcastHold hold;
    private final List<ArrowBuf> buffers;
    private final ArrowBuf exporterMemory;
    private final BufferAllocator entryAllocator;

    Export(
        int id,
        int rows,
        BroadcastHold hold,
        List<ArrowBuf> buffers,
        ArrowBuf exporterMemory,
        BufferAllocator entryAllocator) {
      this.id = id;
      this.rows = rows;
      this.hold = hold;
      this.buffers = buffers;
      this.exporterMemory = exporterMemory;
      this.entryAllocator = entryAllocator;
    }

    /** The keys' sum, read in place; only while the entry still has its decoded buffers. */
    long keySum() {
      check(
          entryAllocator.getAllocatedMemory() >= ENTRY_BYTES,
          "broadcast " + id + " was freed while an export of it is out");
      ArrowBuf keys = buffers.get(1);
      long sum = 0;
      for (int i = 0; i < rows; i++) {
        sum += keys.getLong(i * 8L);
      }
      return sum;
    }

    /**
     * Reads the keys once more, then releases everything, reference by reference as a C Data
     * consumer's release callbacks do: the lease ends at the last one, on this thread.
     */
    void release(boolean holdFirst) throws Exception {
      long expected = DecodedBroadcastCacheLincheckTest.Specification.expectedSum(id);
      check(keySum() == expected, "broadcast " + id + "'s keys changed under its export");
      if (holdFirst) {
        hold.close();
      }
      // The exporter's memory first: its release ends in Arrow's allocator listener, which the
      // model checker runs as one atomic step, and a lease that ended there (removing its hold
      // from the cache's set) was reported still open, on a single thread, on code that
      // CDataExportTest and the stress mode find right. Ended by a leased buffer's release, the
      // lease's end is analyzed step by step.
      exporterMemory.getReferenceManager().release();
      for (ArrowBuf buffer : buffers) {
        buffer.getReferenceManager().release();
      }
      if (!holdFirst) {
        hold.close();
      }
    }
  }
}
