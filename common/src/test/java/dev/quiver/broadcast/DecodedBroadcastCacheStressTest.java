package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many tasks at random: arrivals, sharing on or off, kills (some while waiting on a slow decode),
 * decode failures and consumer behaviours. Whatever happens, every read sees correct data, every
 * failure is one that was injected, and in the end nothing is held and the counters add up. Seeds
 * are fixed so a failure can be replayed (thread interleavings still vary).
 */
class DecodedBroadcastCacheStressTest extends CacheTestBase {

  private static final int THREADS = 16;
  private static final int OPERATIONS = 200;

  /** What the tasks saw. */
  private static final class Tally {
    final AtomicLong opened = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong killed = new AtomicLong();
    final AtomicLong batches = new AtomicLong();

    @Override
    public String toString() {
      return String.format(
          "opened %d, failed %d, killed while waiting %d, batches read %d",
          opened.get(), failed.get(), killed.get(), batches.get());
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {20240611L, 7L})
  void randomTasksReadCorrectDataLeaveNothingBehindAndCountersAddUp(long seed) throws Exception {
    run(seed, false);
  }

  /**
   * The same with retention, a budget of about two entries in a pool Spark's blocks half fill, and
   * broadcasts that stop being live or are dropped while tasks run.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {20240611L, 7L})
  void withRetentionTheStorageMemoryAndEveryAllocatorEndAtZero(long seed) throws Exception {
    run(seed, true);
  }

  private void run(long seed, boolean retain) throws Exception {
    decoder.randomly(seed, 0.15, 0.02, 150, 2);
    Set<Long> live = ConcurrentHashMap.newKeySet();
    BoundedStorageMemory memory = new BoundedStorageMemory(1 << 20);
    Retention retention = Retention.disabled();
    if (retain) {
      live.addAll(Arrays.asList(1L, 2L, 3L, 4L, 5L));
      retention = Retention.of(128 << 10, memory, live::contains);
    }
    DecodedBroadcastCache cache = caches.with(retention);
    List<TestBroadcast> broadcasts =
        Arrays.asList(
            encode(
                1, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {500, 500}, new int[] {300}),
            encode(2, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {2000}),
            encode(3, Shape.DICTIONARY, SparkStreamCodec.LZ4, new int[] {400, 400}),
            encode(4, Shape.ZERO_COLUMNS, StreamCodec.NONE, new int[] {10, 0}, new int[0]),
            encode(5, Shape.BUILD_SIDE, SparkStreamCodec.LZ4));
    Consumer[] consumers = Consumer.values();
    Tally tally = new Tally();
    ExecutorService workers = Executors.newFixedThreadPool(THREADS);
    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    if (retain) {
      Random random = new Random(seed);
      // Stopped by shutdownNow below; it throws nothing worth checking.
      Future<?> unused =
          killer.scheduleWithFixedDelay(
              () -> changeTheirLives(random, live, memory, cache), 0, 3, TimeUnit.MILLISECONDS);
    }
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        Random random = new Random(seed * 7919 + t);
        int thread = t;
        done.add(
            workers.submit(
                () -> {
                  for (int op = 0; op < OPERATIONS; op++) {
                    runOneTask(
                        cache,
                        broadcasts.get(random.nextInt(broadcasts.size())),
                        consumers[random.nextInt(consumers.length)],
                        random,
                        killer,
                        allocator,
                        "thread " + thread + " op " + op,
                        tally);
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      workers.shutdownNow();
      killer.shutdownNow();
      assertTrue(workers.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS));
      assertTrue(killer.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    }

    CacheCounters counters = cache.counters();
    String summary =
        String.format(
            "seed %d: %s; decoder calls %d, decodes %d, private %d, shared reads %d, waits %d,"
                + " failed %d, retained reads %d, evictions budget %d pressure %d dropped %d",
            seed,
            tally,
            decoder.calls(),
            counters.decodes(),
            counters.privateDecodes(),
            counters.sharedReads(),
            counters.waits(),
            counters.failedDecodes(),
            counters.retainedReads(),
            counters.budgetEvictions(),
            counters.pressureEvictions(),
            counters.droppedEvictions());
    System.out.println(summary);
    assertEquals(
        decoder.calls(),
        counters.decodes() + counters.privateDecodes() + counters.failedDecodes(),
        summary);
    assertEquals(
        tally.opened.get(),
        counters.decodes()
            + counters.privateDecodes()
            + counters.sharedReads()
            + counters.retainedReads(),
        summary);
    assertEquals(tally.failed.get(), counters.failedDecodes(), summary);
    assertEquals(
        (long) THREADS * OPERATIONS, tally.opened.get() + tally.failed.get() + tally.killed.get());
    assertTrue(counters.waits() >= tally.killed.get(), summary);
    // The run exercised what it is meant to.
    assertTrue(counters.sharedReads() > 0, summary);
    assertTrue(counters.privateDecodes() > 0, summary);
    assertTrue(counters.failedDecodes() > 0, summary);
    assertTrue(counters.waits() > 0, summary);
    assertEquals(0, counters.entriesHeld(), summary);
    if (retain) {
      assertTrue(counters.retainedReads() > 0, summary);
      memory.release(SPARK_BLOCKS, sparkBlocks);
    }
    cache.close();
    assertEquals(0, memory.used(), "storage memory left acquired");
  }

  private static final long SPARK_BLOCKS = -1;
  private long sparkBlocks;

  /** One change of the broadcasts' lives or of Spark's use of the storage memory. */
  private void changeTheirLives(
      Random random, Set<Long> live, BoundedStorageMemory memory, DecodedBroadcastCache cache) {
    long id = 1L + random.nextInt(5);
    switch (random.nextInt(4)) {
      case 0:
        if (!live.remove(id)) {
          live.add(id);
        }
        break;
      case 1:
        cache.drop(id);
        break;
      default:
        if (sparkBlocks > 0) {
          memory.release(SPARK_BLOCKS, sparkBlocks);
          sparkBlocks = 0;
        } else if (memory.tryAcquire(SPARK_BLOCKS, 15 << 16)) {
          sparkBlocks = 15 << 16;
        }
        break;
    }
  }

  private static void runOneTask(
      DecodedBroadcastCache cache,
      TestBroadcast broadcast,
      Consumer consumer,
      Random random,
      ScheduledExecutorService killer,
      BufferAllocator allocator,
      String name,
      Tally tally)
      throws InterruptedException {
    FakeTask task = new FakeTask();
    boolean share = random.nextInt(8) != 0;
    String killReason = null;
    if (random.nextInt(6) == 0) {
      String reason = "killed: " + name;
      killReason = reason;
      int delay = random.nextBoolean() ? 0 : random.nextInt(200);
      Future<?> unused = killer.schedule(() -> task.kill(reason), delay, TimeUnit.MILLISECONDS);
    }
    int holdMillis = random.nextInt(4) == 0 ? random.nextInt(3) : 0;
    try (BufferAllocator own = allocator.newChildAllocator(name, 0, Long.MAX_VALUE)) {
      BroadcastReader reader = cache.open(broadcast, task, share);
      tally.opened.incrementAndGet();
      tally.batches.addAndGet(consumer.consume(reader, broadcast, own));
      if (holdMillis > 0) {
        Thread.sleep(holdMillis);
      }
    } catch (ScriptedDecoder.InjectedFailure e) {
      tally.failed.incrementAndGet();
    } catch (FakeTask.KilledException e) {
      assertEquals(killReason, e.getMessage(), name);
      tally.killed.incrementAndGet();
    } catch (java.io.IOException e) {
      throw new AssertionError(name + ": unexpected failure", e);
    } finally {
      task.complete();
    }
  }
}
