package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
      try (DecodedBroadcast decoded = BroadcastDecoder.ARROW_IPC.decode(source, measure)) {
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
}
