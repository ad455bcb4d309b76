package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A failed decode is not cached, leaves nothing behind, and its waiters decode for themselves. */
class DecodedBroadcastCacheFailureTest extends CacheTestBase {

  /** Two streams, the second of several batches, so a failure in it comes after allocations. */
  private TestBroadcast broadcast(StreamCodec codec) throws Exception {
    return encode(31, Shape.BUILD_SIDE, codec, new int[] {4000}, new int[] {4000, 4000, 4000});
  }

  /** {@link #broadcast} of {@code codec}, whose first decode fails. */
  private TestBroadcast failingOnce(StreamCodec codec) throws Exception {
    TestBroadcast broadcast = broadcast(codec);
    decoder.failCall(1);
    return broadcast;
  }

  @Test
  void failedDecodeLeavesNothingAllocatedAndTheNextTaskTriesASharedDecodeAgain() throws Exception {
    TestBroadcast broadcast = failingOnce(StreamCodec.NONE);
    FakeTask failing = new FakeTask();
    assertThrows(ScriptedDecoder.InjectedFailure.class, () -> cache.open(broadcast, failing, true));
    assertTrue(decoder.lastFailurePeakBytes() > 0, "the decode failed before allocating");
    CacheSnapshot afterFailure = cache.snapshot();
    assertTrue(afterFailure.isEmpty(), () -> "a failed decode left " + afterFailure);
    failing.complete();
    assertTrue(cache.snapshot().isEmpty(), "the failed task's completion found a hold to end");

    FakeTask next = new FakeTask();
    FakeTask another = new FakeTask();
    assertEquals(
        4, Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, next, true), broadcast, null));
    assertEquals(
        4,
        Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, another, true), broadcast, null));
    assertEquals(2, decoder.calls());
    assertEquals(1, cache.counters().failedDecodes());
    assertEquals(1, cache.counters().decodes(), "the retry was not a shared decode");
    assertEquals(1, cache.counters().sharedReads(), "the retry's entry was not shared");
    assertEquals(0, cache.counters().privateDecodes());
    assertEquals(2, entry(broadcast).holders());
    complete(next, another);
  }

  @Test
  void waitersOfAFailedDecodeDecodeForThemselvesAndTheFailingTaskGetsTheError() throws Exception {
    TestBroadcast broadcast = failingOnce(SparkStreamCodec.LZ4);
    FakeTask failing = new FakeTask();
    HeldDecode decode = openBehindAHeldDecode(broadcast, failing);

    int waiting = 3;
    List<FakeTask> waiters = newTasks(waiting);
    List<Future<Integer>> reads = readTogether(broadcast, waiters, true, Consumer.KEEPS_VIEWS_OPEN);
    awaitCondition("every waiter waits", () -> cache.counters().waits() >= waiting);
    decode.release();

    ExecutionException failure = assertThrows(ExecutionException.class, () -> done(decode.open(0)));
    assertInstanceOf(ScriptedDecoder.InjectedFailure.class, failure.getCause());
    for (Future<Integer> read : reads) {
      assertEquals(4, read.get(TIMEOUT_SECONDS, TimeUnit.SECONDS), "a waiter read wrong data");
    }
    assertEquals(1 + waiting, decoder.calls());
    assertEquals(1, cache.counters().failedDecodes());
    assertEquals(waiting, cache.counters().privateDecodes());
    assertEquals(0, cache.counters().decodes());
    assertEquals(0, cache.counters().sharedReads());
    CacheSnapshot held = cache.snapshot();
    assertTrue(held.entries().isEmpty(), () -> "the failed entry stayed: " + held);
    assertTrue(held.allocatedBytes() > 0, "the waiters' private decodes are not accounted");

    failing.complete();
    for (FakeTask waiter : waiters) {
      waiter.complete();
    }
    assertTrue(cache.snapshot().isEmpty(), () -> cache.snapshot().toString());

    FakeTask later = new FakeTask();
    assertEquals(
        4, Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, later, true), broadcast, null));
    assertEquals(1, cache.counters().decodes(), "a later task did not try a shared decode");
    assertEquals(1, cache.snapshot().entries().size());
    later.complete();
  }

  @Test
  void waiterWhoseOwnDecodeAlsoFailsGetsThatFailure() throws Exception {
    TestBroadcast broadcast = broadcast(StreamCodec.NONE);
    decoder.failCall(1).failCall(2);
    FakeTask failing = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, failing, waiter);
    opens.release();
    for (Future<BroadcastReader> open : List.of(opens.open(0), opens.open(1))) {
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> open.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
      assertInstanceOf(ScriptedDecoder.InjectedFailure.class, e.getCause());
    }
    assertEquals(2, cache.counters().failedDecodes());
    assertEquals(2, decoder.calls());
    complete(failing, waiter);
  }

  @Test
  void failedPrivateDecodeWithSharingOffLeavesNothing() throws Exception {
    TestBroadcast broadcast = failingOnce(SparkStreamCodec.LZ4);
    FakeTask task = new FakeTask();
    assertThrows(ScriptedDecoder.InjectedFailure.class, () -> cache.open(broadcast, task, false));
    assertTrue(decoder.lastFailurePeakBytes() > 0);
    assertEquals(1, cache.counters().failedDecodes());
    assertEquals(0, task.pendingListeners());
    task.complete();
  }
}
