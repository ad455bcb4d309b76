package dev.quiver.broadcast;

import static dev.quiver.broadcast.TestBroadcast.COLOR_DICTIONARY_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.KeyTableDerivation.KeyTable;
import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.DictionaryStreams;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.InMemoryBroadcast;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Broadcasts that carry dictionaries are shared like any other: decoded once, each task reading the
 * shared dictionary buffers through vectors of its own, retained and derived from.
 */
class DecodedBroadcastCacheDictionaryTest extends RetentionTestBase {

  private TestBroadcast broadcast;

  @BeforeEach
  void encodeTheBroadcast() throws Exception {
    broadcast =
        encode(4, Shape.DICTIONARY, SparkStreamCodec.LZ4, new int[] {700, 300}, new int[] {500});
  }

  /** The buffer of the color dictionary's string bytes, as {@code dictionaries} hold it. */
  private static ArrowBuf colorBytes(DictionaryProvider dictionaries) {
    return ((VarCharVector) dictionaries.lookup(COLOR_DICTIONARY_ID).getVector()).getDataBuffer();
  }

  @Test
  void overlappingTasksShareOneDecodeEachSeeingTheSharedDictionaryThroughAVectorOfItsOwn()
      throws Exception {
    FakeTask decoding = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, decoding, waiter);
    opens.release();
    BroadcastReader a = done(opens.open(0));
    BroadcastReader b = done(opens.open(1));
    assertEquals(1, decoder.calls(), "decoder calls");
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().sharedReads());
    assertEquals(0, cache.counters().privateDecodes());
    assertSame(a.broadcast(), b.broadcast(), "one decoded copy for both");

    ArrowBuf shared = colorBytes(a.broadcast().streams().get(0));
    int unseen = shared.refCnt();
    assertTrue(a.next());
    assertTrue(b.next());
    ArrowBuf seenByA = colorBytes(a.dictionaries());
    int seenOnce = shared.refCnt();
    ArrowBuf seenByB = colorBytes(b.dictionaries());
    assertEquals(shared.memoryAddress(), seenByA.memoryAddress(), "a copy, not the shared bytes");
    assertEquals(shared.memoryAddress(), seenByB.memoryAddress(), "a copy, not the shared bytes");
    assertNotSame(
        a.dictionaries().lookup(COLOR_DICTIONARY_ID).getVector(),
        b.dictionaries().lookup(COLOR_DICTIONARY_ID).getVector(),
        "the tasks share one vector");
    assertTrue(seenOnce > unseen, "a's view holds no reference of its own");
    assertEquals(2 * seenOnce - unseen, shared.refCnt(), "b's view holds as many as a's");
    broadcast.check(broadcast.batches().get(0), a.current(), a.dictionaries());

    // A consumer may close its task's dictionary: the other task reads on, from the same bytes.
    a.dictionaries().lookup(COLOR_DICTIONARY_ID).getVector().close();
    assertEquals(seenOnce, shared.refCnt(), "closing a's view released its references");
    decoding.complete();
    assertEquals(seenOnce, shared.refCnt());
    broadcast.check(broadcast.batches().get(0), b.current(), b.dictionaries());
    for (int i = 1; i < broadcast.batches().size(); i++) {
      assertTrue(Consumer.KEEPS_VIEWS_OPEN.readOne(b, broadcast, i, null));
    }
    assertFalse(b.next());
    waiter.complete();
    assertNull(entry(broadcast));
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void aRetainedDictionaryBroadcastIsReadAgainWithoutADecodeAndItsDerivedValueBuiltOnce()
      throws Exception {
    retainingCache(100 * size, 1000 * size);
    KeyTableDerivation keys = new KeyTableDerivation(broadcast, 0);
    FakeTask before = new FakeTask();
    BroadcastReader reader = cache.open(broadcast, before, true);
    KeyTable built = reader.derived("keys", keys);
    Consumer.CLOSES_EACH_VIEW.consume(reader, broadcast, null);
    before.complete();
    CacheSnapshot.EntryState idle = entry(broadcast);
    assertTrue(idle != null && idle.retained(), () -> "not retained: " + cache.snapshot());

    FakeTask after = new FakeTask();
    BroadcastReader again = cache.open(broadcast, after, true);
    assertEquals(BroadcastReader.Served.RETAINED, again.served());
    assertSame(built, again.derived("keys", keys));
    assertEquals(3, Consumer.KEEPS_VIEWS_OPEN.consume(again, broadcast, null));
    assertEquals(1, decoder.calls());
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().retainedReads());
    assertEquals(1, keys.builds());
    after.complete();
    closeAndAssertAllFreed();
    assertEquals(1, keys.releases());
  }

  @Test
  void aDeltaDictionaryStreamIsSharedWithTheValuesItsDeltaAppended() throws Exception {
    byte[] stream = DictionaryStreams.withDelta(allocator, SparkStreamCodec.LZ4);
    InMemoryBroadcast deltas =
        new InMemoryBroadcast(5, SparkStreamCodec.LZ4, List.of(stream), true);
    List<FakeTask> tasks = newTasks(2);
    for (FakeTask task : tasks) {
      BroadcastReader reader = cache.open(deltas, task, true);
      List<List<String>> read = new ArrayList<>();
      while (reader.next()) {
        read.add(DictionaryStreams.decodeStrings(reader.current(), "color", reader.dictionaries()));
      }
      assertEquals(DictionaryStreams.WITH_DELTA_STRINGS, read);
    }
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().sharedReads());
    complete(tasks.get(0), tasks.get(1));
  }

  @Test
  void aDictionaryReplacedAfterABatchUsedItIsRefusedByName() throws Exception {
    byte[] stream = DictionaryStreams.replacedAfterUse(allocator, SparkStreamCodec.LZ4);
    InMemoryBroadcast replaced =
        new InMemoryBroadcast(5, SparkStreamCodec.LZ4, List.of(stream), true);
    FakeTask task = new FakeTask();
    IpcFormatException refused =
        assertThrows(IpcFormatException.class, () -> cache.open(replaced, task, true));
    String expected = "dictionary " + DictionaryStreams.COLOR_ID + " is replaced after";
    assertTrue(refused.getMessage().contains(expected), refused::getMessage);
    assertEquals(1, cache.counters().failedDecodes());
    task.complete();
    assertTrue(cache.snapshot().isEmpty(), () -> cache.snapshot().toString());
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
