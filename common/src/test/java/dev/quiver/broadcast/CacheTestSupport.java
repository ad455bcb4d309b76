package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.quiver.testing.FakeTask;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.BufferAllocator;

/** Shared helpers of the broadcast cache tests. */
final class CacheTestSupport {

  private CacheTestSupport() {}

  /** Upper bound for anything that must merely not hang. */
  static final long TIMEOUT_SECONDS = 10;

  /** Bytes one decode of {@code source} allocates (decoded privately, measured, freed). */
  static long bytesOfOneDecode(BroadcastSource source, BufferAllocator root) throws Exception {
    try (BufferAllocator measure = root.newChildAllocator("measure", 0, Long.MAX_VALUE)) {
      try (DecodedBroadcast decoded = BroadcastDecoder.arrowIpc().decode(source, measure)) {
        assertTrue(decoded.streams().size() == source.streamCount());
        return measure.getAllocatedMemory();
      }
    }
  }

  /**
   * The end of every test: the cache holds nothing (the test's allocator is then checked by {@link
   * dev.quiver.testing.AllocatorExtension}).
   */
  static void assertHoldsNothing(DecodedBroadcastCache cache) {
    CacheSnapshot snapshot = cache.snapshot();
    assertTrue(snapshot.isEmpty(), () -> "the cache still holds " + snapshot);
  }

  /** Waits (bounded) until {@code condition} holds. */
  static void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting until " + what);
      }
      Thread.sleep(2);
    }
  }

  /**
   * Kills {@code waiter}, a task blocked in a wait on another task's work, and returns the
   * exception its wait ended with, checking how it noticed. A waiter whose task tells of kills
   * makes no check while it waits (the kill wakes it, and it checks once); any other checks
   * periodically and stops at its first check after the kill. Counts, not times: the test gives the
   * waiter several check periods to poll in before the kill, and would fail if it polled.
   */
  static Throwable killWaiter(FakeTask waiter, boolean tellsOfKills, Future<?> wait)
      throws InterruptedException {
    long checksBefore = waiter.killChecks();
    Thread.sleep(3 * DecodedBroadcastCache.KILL_CHECK_MILLIS);
    long checksWhileWaiting = waiter.killChecks() - checksBefore;
    if (tellsOfKills) {
      assertEquals(0, checksWhileWaiting, "a waiter told of kills checked for them while waiting");
    } else {
      assertTrue(checksWhileWaiting >= 1, "a waiter not told of kills did not check for them");
    }
    waiter.kill("stage 3 cancelled (test)");
    ExecutionException stopped =
        assertThrows(
            ExecutionException.class,
            () -> wait.get(TIMEOUT_SECONDS, TimeUnit.SECONDS),
            "the killed waiter did not stop while the work was blocked");
    assertInstanceOf(FakeTask.KilledException.class, stopped.getCause());
    assertEquals("stage 3 cancelled (test)", stopped.getCause().getMessage());
    assertEquals(1, waiter.checksAfterKill(), "the waiter did not stop at its first check");
    if (tellsOfKills) {
      assertEquals(checksBefore + 1, waiter.killChecks(), "woken by the kill, it checks once");
    }
    return stopped.getCause();
  }
}
