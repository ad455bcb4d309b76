package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Broadcasts that carry dictionaries are decoded by each task for itself. */
class DecodedBroadcastCacheDictionaryTest extends CacheTestBase {

  private TestBroadcast broadcast;

  @BeforeEach
  void encodeTheBroadcast() throws Exception {
    broadcast =
        encode(41, Shape.DICTIONARY, SparkStreamCodec.LZ4, new int[] {700, 300}, new int[] {500});
  }

  @Test
  void overlappingTasksEachDecodeADictionaryBroadcastForThemselves() throws Exception {
    FakeTask first = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, first, waiter);
    opens.release();

    BroadcastReader firstReader = done(opens.open(0));
    CacheSnapshot afterDecode = cache.snapshot();
    assertTrue(
        afterDecode.entries().isEmpty(), () -> "a dictionary broadcast listed: " + afterDecode);
    BroadcastReader waiterReader = done(opens.open(1));

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
    complete(second, first);
  }

  @Test
  void dictionaryBroadcastWithSharingOffReadsTheSame() throws Exception {
    FakeTask task = new FakeTask();
    assertEquals(
        3, Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, task, false), broadcast, null));
    assertEquals(1, cache.counters().privateDecodes());
    task.complete();
  }
}
