package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A broadcast cache test: each test gets the parts of its {@link CacheFixture}, which checks after
 * the test that every cache made for it holds nothing and that its allocator is back at zero.
 */
@ExtendWith(CacheFixture.class)
abstract class CacheTestBase {

  BufferAllocator allocator;
  ScriptedDecoder decoder;

  /** Over the allocator and the decoder, with no entry limit and no retention. */
  DecodedBroadcastCache cache;

  /** For any other cache over the allocator. */
  CacheFixture.Caches caches;

  /** Threads for the tasks that must block. */
  ExecutorService executor;

  @BeforeEach
  void takeTheFixture(CacheFixture.Caches fixture) {
    allocator = fixture.allocator();
    decoder = fixture.decoder();
    cache = fixture.cache();
    executor = fixture.executor();
    caches = fixture;
  }

  /** A broadcast encoded with the test's allocator (see {@link TestBroadcast#encode}). */
  TestBroadcast encode(long id, Shape shape, StreamCodec codec, int[]... streamBatchRows)
      throws IOException {
    return TestBroadcast.encode(id, shape, codec, allocator, streamBatchRows);
  }

  /** Opens {@code broadcast}, sharing, for {@code task} on one of the test's threads. */
  Future<BroadcastReader> openOnAThread(TestBroadcast broadcast, FakeTask task) {
    return executor.submit(() -> cache.open(broadcast, task, true));
  }

  /** Opens on threads of their own, every one but the first waiting for the first one's decode. */
  static final class HeldDecode {
    private final Gate gate;
    private final List<Future<BroadcastReader>> opens;

    private HeldDecode(Gate gate, List<Future<BroadcastReader>> opens) {
      this.gate = gate;
      this.opens = opens;
    }

    /** Lets the decode go. */
    void release() {
      gate.release();
    }

    boolean isReleased() {
      return gate.isReleased();
    }

    /** The open of the {@code i}th task. */
    Future<BroadcastReader> open(int i) {
      return opens.get(i);
    }
  }

  /**
   * Opens {@code broadcast}, sharing, for each task on a thread of its own, the first task's decode
   * (the decoder's next call) held at a gate: returns once that decode has reached the gate and
   * every other task waits for it, the gate still closed.
   */
  HeldDecode openBehindAHeldDecode(TestBroadcast broadcast, FakeTask... tasks)
      throws InterruptedException {
    Gate gate = decoder.blockCall(decoder.calls() + 1);
    List<Future<BroadcastReader>> opens = new ArrayList<>();
    opens.add(openOnAThread(broadcast, tasks[0]));
    gate.awaitEntered();
    long waits = cache.counters().waits() + tasks.length - 1;
    for (int i = 1; i < tasks.length; i++) {
      opens.add(openOnAThread(broadcast, tasks[i]));
    }
    awaitCondition("the other tasks wait", () -> cache.counters().waits() == waits);
    return new HeldDecode(gate, opens);
  }

  /** Completes the tasks, in this order. */
  static void complete(FakeTask... tasks) {
    for (FakeTask task : tasks) {
      task.complete();
    }
  }

  /** The cache's entry of broadcast {@code id}; null when it has none. */
  /** Opens {@code broadcast}, sharing, for {@code task}, and moves to its first batch. */
  BroadcastReader openAtFirstBatch(TestBroadcast broadcast, FakeTask task) throws IOException {
    BroadcastReader reader = cache.open(broadcast, task, true);
    if (!reader.next()) {
      throw new AssertionError("broadcast " + broadcast.broadcastId() + " has no batch");
    }
    return reader;
  }

  /**
   * Closes each of {@code releases} on a thread of its own, all let go at once, while {@code
   * endMeanwhile} complete on this thread: the releases and the task ends race.
   */
  void releaseOnThreadsWhileTasksEnd(
      List<? extends AutoCloseable> releases, List<FakeTask> endMeanwhile) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (AutoCloseable release : releases) {
      done.add(
          executor.submit(
              () -> {
                go.await();
                release.close();
                return null;
              }));
    }
    go.countDown();
    for (FakeTask task : endMeanwhile) {
      task.complete();
    }
    for (Future<?> release : done) {
      release.get();
    }
  }

  CacheSnapshot.EntryState entry(long id) {
    for (CacheSnapshot.EntryState e : cache.snapshot().entries()) {
      if (e.broadcastId() == id) {
        return e;
      }
    }
    return null;
  }

  /** The cache's entry of {@code broadcast}; null when it has none. */
  CacheSnapshot.EntryState entry(BroadcastSource broadcast) {
    return entry(broadcast.broadcastId());
  }

  /** {@code n} new tasks. */
  static List<FakeTask> newTasks(int n) {
    List<FakeTask> tasks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      tasks.add(new FakeTask());
    }
    return tasks;
  }

  /**
   * Each task opens {@code broadcast} on a thread of its own, all started at once, and reads it as
   * {@code consumer} does: the batches each read.
   */
  List<Future<Integer>> readTogether(
      TestBroadcast broadcast, List<FakeTask> tasks, boolean share, Consumer consumer) {
    List<Callable<Integer>> reads = new ArrayList<>();
    for (FakeTask task : tasks) {
      reads.add(() -> consumer.consume(cache.open(broadcast, task, share), broadcast, null));
    }
    return together(reads);
  }

  /** Starts every call at once, each on a thread of its own: their outcomes, in their order. */
  <T> List<Future<T>> together(List<Callable<T>> calls) {
    CountDownLatch start = new CountDownLatch(1);
    List<Future<T>> outcomes = new ArrayList<>();
    for (Callable<T> call : calls) {
      outcomes.add(
          executor.submit(
              () -> {
                assertTrue(start.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
                return call.call();
              }));
    }
    start.countDown();
    return outcomes;
  }

  /** What {@code open} returned (within {@link CacheTestSupport#TIMEOUT_SECONDS}). */
  static BroadcastReader done(Future<BroadcastReader> open) throws Exception {
    return open.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }
}
