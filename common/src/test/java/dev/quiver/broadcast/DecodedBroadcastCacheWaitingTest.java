package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static dev.quiver.broadcast.CacheTestSupport.killWaiter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tasks arriving during a decode wait for it, and stop if they are killed while waiting. */
class DecodedBroadcastCacheWaitingTest extends CacheTestBase {

  /** A killed waiter must stop well within this (it checks every 100 ms); generous on purpose. */
  private static final long KILL_NOTICED_SECONDS = 5;

  private TestBroadcast broadcast;

  @BeforeEach
  void encodeTheBroadcast() throws Exception {
    broadcast = encode(21, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {1000, 1000});
  }

  @Test
  void taskArrivingDuringADecodeWaitsForItAndThenShares() throws Exception {
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();
    HeldDecode decode = openBehindAHeldDecode(broadcast, first);

    CacheSnapshot decoding = cache.snapshot();
    assertEquals(1, decoding.entries().size(), decoding::toString);
    assertFalse(decoding.entries().get(0).decoded(), "listed as decoded while decoding");

    Future<BroadcastReader> secondOpen = openOnAThread(broadcast, second);
    awaitCondition("the second task waits", () -> cache.counters().waits() >= 1);
    // The decode is blocked, so the waiter cannot have anything to return yet.
    assertThrows(TimeoutException.class, () -> secondOpen.get(300, TimeUnit.MILLISECONDS));
    assertEquals(1, decoder.calls(), "the waiter must not decode");

    decode.release();
    BroadcastReader firstReader = done(decode.open(0));
    BroadcastReader secondReader = done(secondOpen);
    assertEquals(2, Consumer.KEEPS_VIEWS_OPEN.consume(firstReader, broadcast, null));
    assertEquals(2, Consumer.KEEPS_VIEWS_OPEN.consume(secondReader, broadcast, null));

    assertEquals(1, decoder.calls());
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().sharedReads());
    assertEquals(0, cache.counters().privateDecodes());
    assertTrue(cache.counters().waits() >= 1);
    assertEquals(2, entry(broadcast).holders());

    complete(second, first);
  }

  @ToldOfKillsOrNot
  void killedWaiterStopsWithItsReasonWhileTheDecodeIsStillBlocked(boolean tellsOfKills)
      throws Exception {
    FakeTask decoding = new FakeTask();
    FakeTask waiter = tellsOfKills ? FakeTask.tellingOfKills() : new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, decoding, waiter);

    killWaiter(waiter, tellsOfKills, opens.open(1));
    assertFalse(opens.isReleased());
    assertFalse(opens.open(0).isDone(), "the decode should still be blocked");
    CacheSnapshot afterKill = cache.snapshot();
    assertEquals(1, afterKill.entries().get(0).holders(), "the killed waiter kept its hold");
    waiter.complete();

    CacheSnapshot stillDecoding = cache.snapshot();
    assertEquals(1, stillDecoding.entries().size(), stillDecoding::toString);
    assertFalse(stillDecoding.entries().get(0).decoded());

    opens.release();
    BroadcastReader reader = done(opens.open(0));
    assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(reader, broadcast, null));
    assertEquals(1, decoder.calls());
    assertEquals(1, cache.counters().decodes());
    assertEquals(0, cache.counters().sharedReads());
    assertEquals(1, entry(broadcast).holders(), "only the decoding task holds");
    decoding.complete();
  }

  /**
   * The interleaving that used to cost a second decode: the decode ends, and the decoding task
   * reads and completes before the waiter wakes. The waiter has held the entry since it arrived, so
   * the decoding task's completion cannot free it.
   */
  @Test
  void aWaiterHoldsTheEntrySoTheDecodingTaskCannotFreeItBeforeTheWaiterWakes() throws Exception {
    Gate gate = decoder.blockCall(1);
    FakeTask decoding = new FakeTask();
    FakeTask waiter = new FakeTask();
    CountDownLatch parked = new CountDownLatch(1);
    CountDownLatch wake = new CountDownLatch(1);
    waiter.onKillCheck(
        () -> {
          parked.countDown();
          try {
            assertTrue(wake.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    Future<BroadcastReader> decodingOpen = openOnAThread(broadcast, decoding);
    gate.awaitEntered();
    Future<BroadcastReader> waiterOpen = openOnAThread(broadcast, waiter);
    // Parked in its first kill check: it is waiting, and will not see the decode end until woken.
    assertTrue(parked.await(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    assertEquals(2, entry(broadcast).holders(), "the waiter holds from arrival");

    gate.release();
    BroadcastReader first = decodingOpen.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(first, broadcast, null));
    decoding.complete();
    assertEquals(1, entry(broadcast).holders(), "freed under the waiter");

    wake.countDown();
    BroadcastReader second = waiterOpen.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(second, broadcast, null));
    assertEquals(1, decoder.calls(), "the waiter decoded again");
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().sharedReads());
    assertEquals(0, cache.counters().privateDecodes());
    waiter.complete();
  }

  @Test
  void killOfOneWaiterLeavesTheOtherWaitersToShare() throws Exception {
    FakeTask decoding = new FakeTask();
    FakeTask killed = new FakeTask();
    FakeTask patient = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, decoding, killed, patient);

    killed.kill("speculative copy no longer needed");
    ExecutionException stopped =
        assertThrows(
            ExecutionException.class,
            () -> opens.open(1).get(KILL_NOTICED_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(FakeTask.KilledException.class, stopped.getCause());
    killed.complete();
    assertFalse(opens.open(2).isDone(), "the other waiter gave up too");

    opens.release();
    Consumer.KEEPS_VIEWS_OPEN.consume(done(opens.open(0)), broadcast, null);
    Consumer.KEEPS_VIEWS_OPEN.consume(done(opens.open(2)), broadcast, null);
    assertEquals(1, decoder.calls());
    assertEquals(1, cache.counters().sharedReads());
    assertEquals(2, entry(broadcast).holders());
    complete(decoding, patient);
  }

  @Test
  void waiterWhoseThreadIsInterruptedStopsAndKeepsTheInterrupt() throws Exception {
    FakeTask decoding = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode decode = openBehindAHeldDecode(broadcast, decoding);
    CompletableFuture<Thread> waiterThread = new CompletableFuture<>();
    Future<String> waiterOutcome =
        executor.submit(
            () -> {
              waiterThread.complete(Thread.currentThread());
              try {
                cache.open(broadcast, waiter, true);
                return "opened";
              } catch (InterruptedIOException e) {
                return "interrupted, flag " + Thread.currentThread().isInterrupted();
              }
            });
    awaitCondition("the second task waits", () -> cache.counters().waits() >= 1);
    waiterThread.get(TIMEOUT_SECONDS, TimeUnit.SECONDS).interrupt();
    assertEquals(
        "interrupted, flag true", waiterOutcome.get(KILL_NOTICED_SECONDS, TimeUnit.SECONDS));
    waiter.complete();

    decode.release();
    Consumer.CLOSES_EACH_VIEW.consume(done(decode.open(0)), broadcast, null);
    assertEquals(1, entry(broadcast).holders());
    decoding.complete();
  }
}
