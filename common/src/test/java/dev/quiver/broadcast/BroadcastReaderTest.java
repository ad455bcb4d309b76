package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Broadcast shapes (streams, empty ones, zero columns) and what consumers do with their views. */
class BroadcastReaderTest extends CacheTestBase {

  @Test
  void batchesOfSeveralStreamsComeInStreamOrder() throws Exception {
    TestBroadcast broadcast =
        encode(
            51,
            Shape.BUILD_SIDE,
            SparkStreamCodec.LZ4,
            new int[] {100, 200},
            new int[] {50},
            new int[0],
            new int[] {300, 10, 20});
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, task, true);
    assertEquals(0, reader.streamIndex());
    assertThrows(IllegalStateException.class, reader::current, "current() before next()");
    List<Integer> streams = new ArrayList<>();
    for (TestBroadcast.ExpectedBatch expected : broadcast.batches()) {
      assertTrue(reader.next());
      streams.add(reader.streamIndex());
      broadcast.check(expected, reader.current(), reader.dictionaries());
    }
    assertEquals(Arrays.asList(0, 0, 1, 3, 3, 3), streams);
    assertFalse(reader.next());
    assertFalse(reader.next(), "next() after the end stays false");
    assertEquals(680, reader.broadcast().rowCount());
    task.complete();
  }

  @Test
  void zeroColumnBatchesKeepTheirRowCounts() throws Exception {
    TestBroadcast broadcast =
        encode(52, Shape.ZERO_COLUMNS, StreamCodec.NONE, new int[] {5, 0, 17}, new int[] {3});
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, first, true);
    assertEquals(4, Consumer.KEEPS_VIEWS_OPEN.consume(reader, broadcast, null));
    assertEquals(
        4, Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, second, true), broadcast, null));
    assertEquals(1, decoder.calls());
    assertEquals(25, reader.broadcast().rowCount());
    complete(first, second);
  }

  @Test
  void emptyBroadcastHasNoBatches() throws Exception {
    TestBroadcast broadcast = encode(53, Shape.BUILD_SIDE, SparkStreamCodec.LZ4);
    assertEquals(0, broadcast.streamCount());
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, first, true);
    assertFalse(reader.next(), "an empty broadcast has a batch");
    assertThrows(IllegalStateException.class, reader::current);
    assertFalse(cache.open(broadcast, second, true).next());
    assertEquals(1, decoder.calls());
    assertEquals(1, cache.counters().sharedReads());
    CacheSnapshot snapshot = cache.snapshot();
    assertEquals(1, snapshot.entries().size(), snapshot::toString);
    assertEquals(2, snapshot.entries().get(0).holders());
    complete(first, second);
  }

  @Test
  void streamsWithZeroBatchesAreSkipped() throws Exception {
    TestBroadcast onlyEmpty = encode(54, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[0]);
    TestBroadcast emptyThenOne =
        encode(55, Shape.BUILD_SIDE, StreamCodec.NONE, new int[0], new int[] {40});
    FakeTask task = new FakeTask();
    BroadcastReader empty = cache.open(onlyEmpty, task, true);
    assertFalse(empty.next());
    BroadcastReader reader = cache.open(emptyThenOne, task, true);
    assertTrue(reader.next());
    assertEquals(1, reader.streamIndex());
    emptyThenOne.check(emptyThenOne.batches().get(0), reader.current(), reader.dictionaries());
    assertFalse(reader.next());
    assertEquals(2, cache.snapshot().entries().size());
    task.complete();
  }

  @Test
  void readerClosesAViewWhenItMovesOn() throws Exception {
    TestBroadcast broadcast =
        encode(56, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {1000, 1000, 1000, 1000});
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, task, true);
    List<ArrowRecordBatch> decoded = reader.broadcast().streams().get(0).batches();
    int[] unread = new int[decoded.size()];
    for (int i = 0; i < decoded.size(); i++) {
      unread[i] = references(decoded.get(i));
    }
    VectorSchemaRoot previous = null;
    for (int i = 0; i < decoded.size(); i++) {
      assertTrue(reader.next());
      assertEquals(
          unread[i], references(decoded.get(i)), "a view was made before it was asked for");
      VectorSchemaRoot view = reader.current();
      assertTrue(references(decoded.get(i)) > unread[i], "the view holds no reference");
      if (previous != null) {
        assertEquals(unread[i - 1], references(decoded.get(i - 1)), "the previous view is open");
        for (FieldVector vector : previous.getFieldVectors()) {
          assertEquals(0, vector.getValueCount(), "the previous view was left open");
        }
      }
      previous = view;
    }
    assertFalse(reader.next());
    assertEquals(unread[3], references(decoded.get(3)), "the last view is open after the end");
    task.complete();
  }

  /** References on the memory a decoded batch's buffers share. */
  private static int references(ArrowRecordBatch batch) {
    return batch.getBuffers().get(1).getReferenceManager().getRefCount();
  }

  @ParameterizedTest
  @EnumSource(Consumer.class)
  void everyConsumerStyleLeavesNothingOnceItsTaskCompletes(Consumer consumer) throws Exception {
    TestBroadcast broadcast =
        encode(57, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {600, 600}, new int[] {600});
    for (boolean share : new boolean[] {true, false}) {
      FakeTask task = new FakeTask();
      try (BufferAllocator own = allocator.newChildAllocator("consumer", 0, Long.MAX_VALUE)) {
        int read = consumer.consume(cache.open(broadcast, task, share), broadcast, own);
        assertEquals(consumer == Consumer.STOPS_AFTER_FIRST_BATCH ? 1 : 3, read);
        assertEquals(0, own.getAllocatedMemory());
      }
      task.complete();
      assertTrue(cache.snapshot().isEmpty(), () -> consumer + " left " + cache.snapshot());
    }
  }

  @Test
  void consumersSharingABroadcastDoNotDisturbEachOther() throws Exception {
    TestBroadcast broadcast =
        encode(
            58, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {500, 500}, new int[] {500, 500});
    Map<Consumer, FakeTask> tasks = new EnumMap<>(Consumer.class);
    Map<Consumer, BroadcastReader> readers = new EnumMap<>(Consumer.class);
    for (Consumer consumer : Consumer.values()) {
      FakeTask task = new FakeTask();
      tasks.put(consumer, task);
      readers.put(consumer, cache.open(broadcast, task, true));
    }
    assertEquals(1, decoder.calls());
    try (BufferAllocator own = allocator.newChildAllocator("consumer", 0, Long.MAX_VALUE)) {
      // Batch by batch, every consumer in turn: the closer and the transferrer act on a batch
      // before the others read the same batch.
      Consumer[] order = {
        Consumer.CLOSES_EACH_VIEW,
        Consumer.TRANSFERS_VIEWS_OUT,
        Consumer.STOPS_AFTER_FIRST_BATCH,
        Consumer.KEEPS_VIEWS_OPEN
      };
      for (int batch = 0; batch < 4; batch++) {
        for (Consumer consumer : order) {
          if (consumer == Consumer.STOPS_AFTER_FIRST_BATCH && batch > 0) {
            continue;
          }
          assertTrue(consumer.readOne(readers.get(consumer), broadcast, batch, own));
        }
        if (batch == 0) {
          // The consumer that stops ends its task while the others are still reading.
          tasks.get(Consumer.STOPS_AFTER_FIRST_BATCH).complete();
          assertEquals(3, entry(broadcast).holders());
        }
      }
      for (Consumer consumer : order) {
        if (consumer != Consumer.STOPS_AFTER_FIRST_BATCH) {
          assertFalse(consumer.readOne(readers.get(consumer), broadcast, 4, own));
        }
      }
      assertEquals(0, own.getAllocatedMemory());
    }
    for (FakeTask task : tasks.values()) {
      task.complete();
    }
  }

  @Test
  void keptViewsOfAPrivateDecodeAreClosedAtCompletion() throws Exception {
    TestBroadcast broadcast = encode(59, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {10, 20});
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, task, false);
    assertTrue(reader.next());
    VectorSchemaRoot kept = reader.current();
    task.complete();
    assertEquals(0, kept.getFieldVectors().get(0).getValueCount(), "completion left the view open");
  }

  @Test
  void readerClosedByItsTaskRefusesToMoveOn() throws Exception {
    TestBroadcast broadcast = encode(60, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {10});
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, task, true);
    task.complete();
    assertThrows(IllegalStateException.class, reader::next);
  }

  @Test
  void currentBatchIsTheSharedDecodedBatchAndTakesNoReference() throws Exception {
    TestBroadcast broadcast =
        encode(61, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {300, 200}, new int[] {50});
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, task, true);
    assertThrows(IllegalStateException.class, reader::currentBatch);
    List<ArrowRecordBatch> expected = new ArrayList<>();
    for (dev.quiver.ipc.DecodedStream stream : reader.broadcast().streams()) {
      expected.addAll(stream.batches());
    }
    int[] before = new int[expected.size()];
    for (int i = 0; i < before.length; i++) {
      before[i] = references(expected.get(i));
    }
    for (int i = 0; i < expected.size(); i++) {
      assertTrue(reader.next());
      assertTrue(expected.get(i) == reader.currentBatch(), "batch " + i + " is not the shared one");
      assertEquals(
          reader.broadcast().streams().get(reader.streamIndex()).schema(), reader.currentSchema());
      assertEquals(before[i], references(expected.get(i)), "reading the batch took a reference");
    }
    assertFalse(reader.next());
    assertThrows(IllegalStateException.class, reader::currentBatch);
    task.complete();
  }
}
