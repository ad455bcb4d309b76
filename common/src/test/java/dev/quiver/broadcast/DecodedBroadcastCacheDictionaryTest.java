package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.assertHoldsNothing;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.FakeTask;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Broadcasts that carry dictionaries are decoded by each task for itself. */
@ExtendWith(AllocatorExtension.class)
class DecodedBroadcastCacheDictionaryTest {

  private BufferAllocator allocator;
  private ExecutorService executor;
  private ScriptedDecoder decoder;
  private DecodedBroadcastCache cache;
  private TestBroadcast broadcast;

  @BeforeEach
  void setUp(BufferAllocator allocator) throws Exception {
    this.allocator = allocator;
    executor = Executors.newCachedThreadPool();
    decoder = new ScriptedDecoder();
    cache = new DecodedBroadcastCache(allocator, decoder, Long.MAX_VALUE);
    broadcast =
        TestBroadcast.encode(
            41,
            Shape.DICTIONARY,
            SparkStreamCodec.LZ4,
            allocator,
            new int[] {700, 300},
            new int[] {500});
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    decoder.releaseAll();
    executor.shutdownNow();
    assertTrue(executor.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS));
  }

  @Test
  void overlappingTasksEachDecodeADictionaryBroadcastForThemselves() throws Exception {
    ScriptedDecoder.Gate gate = decoder.blockCall(1);
    FakeTask first = new FakeTask();
    FakeTask waiter = new FakeTask();
    Future<BroadcastReader> firstOpen = executor.submit(() -> cache.open(broadcast, first, true));
    gate.awaitEntered();
    Future<BroadcastReader> waiterOpen = executor.submit(() -> cache.open(broadcast, waiter, true));
    awaitCondition("the second task waits", () -> cache.counters().waits() >= 1);
    gate.release();

    BroadcastReader firstReader = firstOpen.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    CacheSnapshot afterDecode = cache.snapshot();
    assertTrue(
        afterDecode.entries().isEmpty(), () -> "a dictionary broadcast listed: " + afterDecode);
    BroadcastReader waiterReader = waiterOpen.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);

    assertEquals(3, Consumer.KEEPS_VIEWS_OPEN.consume(firstReader, broadcast, null));
    assertEquals(3, Consumer.KEEPS_VIEWS_OPEN.consume(waiterReader, broadcast, null));
    assertEquals(2, decoder.calls(), "the dictionary broadcast was shared");
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().privateDecodes());
    assertEquals(0, cache.counters().sharedReads());
    assertTrue(firstReader.broadcast() != waiterReader.broadcast(), "one decoded copy for both");
    CacheSnapshot bothHold = cache.snapshot();
    assertTrue(bothHold.entries().isEmpty(), bothHold::toString);
    assertTrue(bothHold.allocatedBytes() > 0);

    first.complete();
    assertTrue(cache.snapshot().entries().isEmpty());
    assertTrue(cache.snapshot().allocatedBytes() > 0, "the waiter's copy went with the first");
    waiter.complete();
    assertHoldsNothing(cache);
  }

  @Test
  void taskArrivingAfterADictionaryDecodeDecodesAgainWhileTheFirstStillHoldsIt() throws Exception {
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();
    BroadcastReader firstReader = cache.open(broadcast, first, true);
    BroadcastReader secondReader = cache.open(broadcast, second, true);
    try (BufferAllocator own = allocator.newChildAllocator("consumer", 0, Long.MAX_VALUE)) {
      assertEquals(3, Consumer.TRANSFERS_VIEWS_OUT.consume(firstReader, broadcast, own));
    }
    assertEquals(3, Consumer.CLOSES_EACH_VIEW.consume(secondReader, broadcast, null));
    assertEquals(2, decoder.calls());
    assertEquals(0, cache.counters().sharedReads());
    assertTrue(cache.snapshot().entries().isEmpty());
    second.complete();
    first.complete();
    assertHoldsNothing(cache);
  }

  @Test
  void dictionaryBroadcastWithSharingOffReadsTheSame() throws Exception {
    FakeTask task = new FakeTask();
    assertEquals(
        3, Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, task, false), broadcast, null));
    assertEquals(1, cache.counters().privateDecodes());
    task.complete();
    assertHoldsNothing(cache);
  }
}
