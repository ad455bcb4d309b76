package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Overlapping tasks share one decode and one copy; the setting turns sharing off. */
class DecodedBroadcastCacheSharingTest extends CacheTestBase {

  private static final int TASKS = 6;

  private TestBroadcast broadcast(StreamCodec codec) throws Exception {
    return encode(7, Shape.BUILD_SIDE, codec, new int[] {3000, 3000}, new int[] {2500});
  }

  /**
   * {@link #TASKS} tasks, started at once: each opens {@code broadcast}, reads all its 3 batches
   * keeping the views open, and keeps its hold (no complete).
   */
  private List<FakeTask> readTogether(TestBroadcast broadcast, boolean share) throws Exception {
    List<FakeTask> tasks = newTasks(TASKS);
    for (Future<Integer> read : readTogether(broadcast, tasks, share, Consumer.KEEPS_VIEWS_OPEN)) {
      assertEquals(3, read.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    }
    return tasks;
  }

  @Test
  void overlappingTasksDecodeOnceHoldOneCopyAndFreeItWithTheLastTask() throws Exception {
    TestBroadcast broadcast = broadcast(SparkStreamCodec.LZ4);
    long oneDecode = bytesOfOneDecode(broadcast, allocator);
    List<FakeTask> tasks = readTogether(broadcast, true);

    assertEquals(1, decoder.calls(), "decoder calls");
    assertEquals(1, cache.counters().decodes());
    assertEquals(TASKS - 1, cache.counters().sharedReads());
    assertEquals(0, cache.counters().privateDecodes());
    assertEquals(0, cache.counters().failedDecodes());
    CacheSnapshot snapshot = cache.snapshot();
    assertEquals(1, snapshot.entries().size(), snapshot::toString);
    CacheSnapshot.EntryState entry = snapshot.entries().get(0);
    assertEquals(7, entry.broadcastId());
    assertTrue(entry.decoded());
    assertEquals(TASKS, entry.holders());
    // One decoded copy (views hold references on it, plus any small buffers of their own).
    assertTrue(entry.bytes() >= oneDecode, () -> entry + " vs one decode " + oneDecode);
    assertTrue(entry.bytes() < oneDecode * 3 / 2, () -> entry + " vs one decode " + oneDecode);
    assertEquals(entry.bytes(), snapshot.allocatedBytes(), "nothing allocated outside the entry");

    for (int i = 0; i < TASKS - 1; i++) {
      tasks.get(i).complete();
      CacheSnapshot after = cache.snapshot();
      assertEquals(1, after.entries().size(), () -> "freed before the last holder: " + after);
      assertEquals(TASKS - 1 - i, after.entries().get(0).holders());
    }
    tasks.get(TASKS - 1).complete();
    assertTrue(
        cache.snapshot().isEmpty(), () -> "not freed at the last holder: " + cache.snapshot());
    assertEquals(0, allocator.getAllocatedMemory());

    FakeTask later = new FakeTask();
    assertEquals(
        3, Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, later, true), broadcast, null));
    assertEquals(2, decoder.calls(), "a task after the last holder decodes again");
    assertEquals(2, cache.counters().decodes());
    assertEquals(1, cache.snapshot().entries().size());
    later.complete();
  }

  @Test
  void tasksOneAfterAnotherEachDecode() throws Exception {
    TestBroadcast broadcast = broadcast(StreamCodec.NONE);
    for (int i = 1; i <= 3; i++) {
      FakeTask task = new FakeTask();
      Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, task, true), broadcast, null);
      task.complete();
      assertTrue(cache.snapshot().isEmpty(), () -> "held after its only task: " + cache.snapshot());
      assertEquals(i, decoder.calls());
    }
    assertEquals(3, cache.counters().decodes());
    assertEquals(0, cache.counters().sharedReads());
  }

  @Test
  void differentBroadcastsAreDifferentEntries() throws Exception {
    TestBroadcast seven = broadcast(StreamCodec.NONE);
    TestBroadcast eight = seven.withId(8);
    FakeTask a = new FakeTask();
    FakeTask b = new FakeTask();
    Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(seven, a, true), seven, null);
    Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(eight, b, true), eight, null);
    assertEquals(2, decoder.calls());
    assertEquals(2, cache.snapshot().entries().size());
    a.complete();
    assertEquals(1, cache.snapshot().entries().size());
    assertEquals(8, cache.snapshot().entries().get(0).broadcastId());
    b.complete();
  }

  @Test
  void sharingOffDecodesForEachOverlappingTaskThroughTheSameReader() throws Exception {
    TestBroadcast broadcast = broadcast(SparkStreamCodec.LZ4);
    long oneDecode = bytesOfOneDecode(broadcast, allocator);
    List<FakeTask> tasks = readTogether(broadcast, false);

    assertEquals(TASKS, decoder.calls(), "decoder calls");
    assertEquals(TASKS, cache.counters().privateDecodes());
    assertEquals(0, cache.counters().decodes());
    assertEquals(0, cache.counters().sharedReads());
    assertEquals(0, cache.counters().waits());
    CacheSnapshot snapshot = cache.snapshot();
    assertTrue(snapshot.entries().isEmpty(), () -> "private decodes listed: " + snapshot);
    assertTrue(
        snapshot.allocatedBytes() >= TASKS * oneDecode,
        () -> snapshot + " vs " + TASKS + " decodes of " + oneDecode);

    for (FakeTask task : tasks) {
      task.complete();
    }
  }

  @Test
  void sharingOffAlongsideSharingOn() throws Exception {
    TestBroadcast broadcast = broadcast(StreamCodec.NONE);
    FakeTask shared = new FakeTask();
    FakeTask alone = new FakeTask();
    FakeTask sharedToo = new FakeTask();
    Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, shared, true), broadcast, null);
    Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, alone, false), broadcast, null);
    Consumer.KEEPS_VIEWS_OPEN.consume(cache.open(broadcast, sharedToo, true), broadcast, null);
    assertEquals(2, decoder.calls());
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().privateDecodes());
    assertEquals(1, cache.counters().sharedReads());
    assertEquals(2, entry(broadcast).holders(), "the private task took no hold");
    complete(alone, shared);
    assertEquals(1, entry(broadcast).holders());
    sharedToo.complete();
  }

  @Test
  void taskOpeningABroadcastTwiceHoldsItTwice() throws Exception {
    TestBroadcast broadcast = broadcast(StreamCodec.NONE);
    FakeTask task = new FakeTask();
    BroadcastReader first = cache.open(broadcast, task, true);
    BroadcastReader second = cache.open(broadcast, task, true);
    assertEquals(1, decoder.calls());
    assertEquals(2, entry(broadcast).holders());
    // Interleaved: each reader has its own position and its own views.
    for (TestBroadcast.ExpectedBatch expected : broadcast.batches()) {
      assertTrue(first.next());
      assertTrue(second.next());
      broadcast.check(expected, first.current(), first.dictionaries());
      broadcast.check(expected, second.current(), second.dictionaries());
    }
    task.complete();
  }
}
