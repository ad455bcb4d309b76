package dev.quiver.bench;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.CacheCounters;
import dev.quiver.broadcast.DecodedBroadcastCache;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The decoded-broadcast cache on a 1M-row build side (long, long, string; Spark's lz4 codec).
 *
 * <ul>
 *   <li>{@code singleTaskDecode}: one task opens the broadcast on a cache that holds nothing, so it
 *       decodes; it reads every batch and completes (freeing the entry).
 *   <li>{@code singleTaskView}: the same on a warm cache, while another task holds the entry: the
 *       task only makes views of the shared buffers.
 *   <li>{@code concurrentTasks}: one round = {@code threads} tasks, each on its own thread, open
 *       the same broadcast with sharing on or off, read every batch, and wait until all of them
 *       hold their reader; then all complete. The score is wall time per round; the auxiliary
 *       counters give per round the CPU time of the worker threads ({@code cpuMs}), the peak bytes
 *       allocated in the round's allocator ({@code peakMiB}), the bytes allocated while every task
 *       held its reader ({@code heldMiB}), and the decodes the cache made.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Xmx2g",
      "-XX:MaxDirectMemorySize=12g",
      "--add-opens=java.base/java.nio=ALL-UNNAMED"
    })
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public class CacheBenchmark {

  private static final double MIB = 1024.0 * 1024.0;
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** The broadcast: one compressed IPC stream. */
  @State(Scope.Benchmark)
  public static class Data {
    @Param({"1000000"})
    public int rows;

    /** Rows per record batch: Comet's default batch size. */
    @Param({"8192"})
    public int batchRows;

    BenchBroadcast source;

    @Setup(Level.Trial)
    public void encode() throws IOException {
      try (BufferAllocator allocator = new RootAllocator()) {
        byte[] stream =
            BenchBroadcast.encode(
                BenchBroadcast.Shape.BUILD_SIDE, rows, batchRows, SparkStreamCodec.LZ4, allocator);
        source = new BenchBroadcast(1, stream, SparkStreamCodec.LZ4);
      }
    }
  }

  /** A cold cache (nothing held) and a warm one (another task holds the entry). */
  @State(Scope.Benchmark)
  public static class Single {
    BenchBroadcast source;
    long rows;
    BufferAllocator root;
    DecodedBroadcastCache cold;
    DecodedBroadcastCache warm;
    FakeTask holder;

    @Setup(Level.Trial)
    public void open(Data data) throws IOException {
      source = data.source;
      rows = data.rows;
      root = new RootAllocator();
      cold = new DecodedBroadcastCache(root.newChildAllocator("cold", 0, Long.MAX_VALUE));
      warm = new DecodedBroadcastCache(root.newChildAllocator("warm", 0, Long.MAX_VALUE));
      holder = new FakeTask();
      readAll(warm.open(source, holder, true), rows);
      System.out.printf(
          "%n[CacheBenchmark] %d rows: lz4 stream %,d bytes, one decoded copy %,d bytes%n",
          data.rows, source.bytes().length, warm.snapshot().allocatedBytes());
    }

    @TearDown(Level.Trial)
    public void close() {
      holder.complete();
      if (!cold.snapshot().isEmpty() || !warm.snapshot().isEmpty()) {
        throw new IllegalStateException("cache not empty: " + cold.snapshot() + warm.snapshot());
      }
      if (root.getAllocatedMemory() != 0) {
        throw new IllegalStateException("leaked " + root.getAllocatedMemory() + " bytes");
      }
      // The caches never close their parent allocators; the root's close checks the children.
      for (BufferAllocator child : new ArrayList<>(root.getChildAllocators())) {
        child.close();
      }
      root.close();
    }

    long task(DecodedBroadcastCache cache) throws IOException {
      FakeTask task = new FakeTask();
      try {
        return readAll(cache.open(source, task, true), rows);
      } finally {
        task.complete();
      }
    }
  }

  /** Worker threads and an allocator for the concurrent rounds. */
  @State(Scope.Benchmark)
  public static class Round {
    @Param({"8", "32", "128"})
    public int threads;

    @Param({"true", "false"})
    public boolean share;

    BenchBroadcast source;
    long rows;
    BufferAllocator root;
    ExecutorService pool;

    @Setup(Level.Trial)
    public void start(Data data) {
      source = data.source;
      rows = data.rows;
      root = new RootAllocator();
      AtomicInteger n = new AtomicInteger();
      pool =
          Executors.newFixedThreadPool(
              threads,
              r -> {
                Thread t = new Thread(r, "task-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      ((ThreadPoolExecutor) pool).prestartAllCoreThreads();
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
      pool.shutdownNow();
      pool.awaitTermination(1, TimeUnit.MINUTES);
      root.close();
    }
  }

  /**
   * Per-round figures, averaged over the rounds of an iteration; reported as the mean over
   * iterations of the per-round figure.
   */
  @AuxCounters(AuxCounters.Type.EVENTS)
  @State(Scope.Thread)
  public static class RoundStats extends IterationCounters {
    /** CPU time of all worker threads in one round, in ms. */
    public double cpuMs;

    /** Peak bytes allocated during one round, in MiB. */
    public double peakMiB;

    /** Bytes allocated while every task held its reader, in MiB. */
    public double heldMiB;

    /** Decodes (shared and private) the cache made in one round. */
    public double decodes;

    private long cpuNanos;
    private long peakBytes;
    private long heldBytes;
    private long decodeCount;

    @Override
    protected void clearSums() {
      cpuNanos = 0;
      peakBytes = 0;
      heldBytes = 0;
      decodeCount = 0;
    }

    void add(long cpu, long peak, long held, long decoded) {
      countEvent();
      cpuNanos += cpu;
      peakBytes += peak;
      heldBytes += held;
      decodeCount += decoded;
      cpuMs = perEvent(cpuNanos / 1e6);
      peakMiB = perEvent(peakBytes / MIB);
      heldMiB = perEvent(heldBytes / MIB);
      decodes = perEvent((double) decodeCount);
    }
  }

  /** Reads every batch of {@code reader}, touching one value of each, and checks the row count. */
  static long readAll(BroadcastReader reader, long expectedRows) {
    long rows = 0;
    long sum = 0;
    while (reader.next()) {
      VectorSchemaRoot view = reader.current();
      rows += view.getRowCount();
      sum += ((BigIntVector) view.getVector(0)).get(0);
    }
    if (rows != expectedRows) {
      throw new IllegalStateException("read " + rows + " rows, expected " + expectedRows);
    }
    return sum;
  }

  @Benchmark
  public long singleTaskDecode(Single s, InvocationCpu cpu) throws IOException {
    return cpu.count(() -> s.task(s.cold));
  }

  @Benchmark
  public long singleTaskView(Single s, InvocationCpu cpu) throws IOException {
    return cpu.count(() -> s.task(s.warm));
  }

  @Benchmark
  public long concurrentTasks(Round r, RoundStats stats)
      throws InterruptedException, ExecutionException {
    BufferAllocator allocator = r.root.newChildAllocator("round", 0, Long.MAX_VALUE);
    DecodedBroadcastCache cache = new DecodedBroadcastCache(allocator);
    CountDownLatch holding = new CountDownLatch(r.threads);
    CountDownLatch release = new CountDownLatch(1);
    AtomicLong cpu = new AtomicLong();
    List<Future<Long>> tasks = new ArrayList<>(r.threads);
    try {
      for (int i = 0; i < r.threads; i++) {
        tasks.add(
            r.pool.submit(
                () -> {
                  long start = THREADS.getCurrentThreadCpuTime();
                  FakeTask task = new FakeTask();
                  long sum;
                  try {
                    sum = readAll(cache.open(r.source, task, r.share), r.rows);
                  } catch (IOException | RuntimeException | Error e) {
                    task.complete();
                    throw e;
                  } finally {
                    cpu.addAndGet(THREADS.getCurrentThreadCpuTime() - start);
                    holding.countDown();
                  }
                  release.await();
                  long end = THREADS.getCurrentThreadCpuTime();
                  task.complete();
                  cpu.addAndGet(THREADS.getCurrentThreadCpuTime() - end);
                  return sum;
                }));
      }
      holding.await();
      long held = allocator.getAllocatedMemory();
      release.countDown();
      long sum = 0;
      for (Future<Long> task : tasks) {
        sum += task.get();
      }
      CacheCounters counters = cache.counters();
      stats.add(
          cpu.get(),
          allocator.getPeakMemoryAllocation(),
          held,
          counters.decodes() + counters.privateDecodes());
      return sum;
    } finally {
      release.countDown();
      allocator.close();
    }
  }
}
