package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CDataExport} through the real C Data Interface (Arrow's JNI library): a consumer imports
 * what a task exported, with an allocator of its own, as native code would, and releases it
 * whenever and wherever it likes.
 */
class CDataExportTest extends RetentionTestBase {

  /** The consumer's side: its own root, as a native library's memory is not the executor's. */
  private BufferAllocator consumer;

  @BeforeEach
  void openTheConsumer() {
    consumer = new RootAllocator();
  }

  @AfterEach
  void closeTheConsumer() {
    assertEquals(0, consumer.getAllocatedMemory(), "the consumer kept imported memory");
    consumer.close();
  }

  /** A batch imported from an export: closing it is the consumer's release. */
  private static final class Imported implements AutoCloseable {
    final VectorSchemaRoot root;
    final CDataDictionaryProvider dictionaries;

    Imported(VectorSchemaRoot root, CDataDictionaryProvider dictionaries) {
      this.root = root;
      this.dictionaries = dictionaries;
    }

    @Override
    public void close() {
      root.close();
      dictionaries.close();
    }
  }

  /** Broadcast 1 went with its last export's release, and so did every byte of the cache's. */
  private void assertFreedAtTheLastRelease() {
    assertNull(entry(1), "not freed at the last release");
    assertEquals(0, allocator.getAllocatedMemory());
  }

  private Imported exportAndImport(BroadcastReader reader, String holder) {
    try (ArrowArray array = ArrowArray.allocateNew(consumer);
        ArrowSchema schema = ArrowSchema.allocateNew(consumer)) {
      CDataExport.exportBatch(reader, holder, array, schema);
      CDataDictionaryProvider dictionaries = new CDataDictionaryProvider();
      return new Imported(
          Data.importVectorSchemaRoot(consumer, array, schema, dictionaries), dictionaries);
    }
  }

  /**
   * A task opened at its first batch, which it exported, and that batch as its own view reads it.
   */
  private final class FirstBatch implements HeldForAConsumer {
    final FakeTask task = new FakeTask();
    final BroadcastReader reader;
    final Imported imported;
    final String expected;

    FirstBatch(TestBroadcast broadcast, String holder) throws IOException {
      reader = openAtFirstBatch(broadcast, task);
      imported = exportAndImport(reader, holder);
      expected = reader.current().contentToTSVString();
    }

    @Override
    public void assertReadable() {
      assertEquals(expected, imported.root.contentToTSVString(), "still readable");
    }

    @Override
    public void release() {
      imported.close();
    }
  }

  /** A retaining cache, and a task that exported broadcast 1 to {@code holder} and has ended. */
  private FirstBatch exportedPastItsTask(String holder) throws IOException {
    retainingCache(10 * size, 100 * size);
    FirstBatch exported = new FirstBatch(first, holder);
    exported.task.complete();
    return exported;
  }

  /** The imported batch holds the values the reader's own view shows. */
  private static void assertSameValues(BroadcastReader reader, VectorSchemaRoot imported) {
    assertEquals(reader.current().contentToTSVString(), imported.contentToTSVString());
  }

  /**
   * Every buffer of the shared batch that has memory is exported in place: the imported buffer is
   * at the same address.
   */
  private static void assertSharedAddresses(ArrowRecordBatch shared, VectorSchemaRoot imported) {
    List<Long> expected = new ArrayList<>();
    for (ArrowBuf buffer : shared.getBuffers()) {
      expected.add(buffer.capacity() == 0 ? -1 : buffer.memoryAddress());
    }
    List<Long> actual = new ArrayList<>();
    try (ArrowRecordBatch unloaded = new VectorUnloader(imported).getRecordBatch()) {
      for (int i = 0; i < unloaded.getBuffers().size(); i++) {
        actual.add(expected.get(i) == -1 ? -1 : unloaded.getBuffers().get(i).memoryAddress());
      }
    }
    assertTrue(expected.stream().anyMatch(a -> a != -1), "nothing to compare");
    assertEquals(expected, actual, "an exported buffer is not the shared one");
  }

  @Test
  void eachBatchImportsWithTheDecodesValuesAtTheSharedBuffersAddresses() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    int batches = 0;
    while (reader.next()) {
      try (Imported imported = exportAndImport(reader, "consumer")) {
        assertSameValues(reader, imported.root);
        assertSharedAddresses(reader.currentBatch(), imported.root);
        assertEquals(2, holders(1), "the task and its exports to the consumer");
      }
      assertEquals(2, holders(1), "the task's exports to one consumer share one hold");
      batches++;
    }
    assertEquals(2, batches);
    assertEquals(1, cache.outstandingHolds().size());
    task.complete();
    assertTrue(cache.outstandingHolds().isEmpty(), "everything released: it ends with the task");
    assertFreedAtTheLastRelease();
  }

  @Test
  void everyExportedArrayHoldsTheEntryUntilItsRelease() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAtFirstBatch(first, task);
    List<Imported> exports = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      exports.add(exportAndImport(reader, "consumer " + i));
    }
    assertEquals(4, holders(1));
    assertEquals(3, cache.outstandingHolds().size());
    task.complete();
    assertEquals(3, holders(1), "the exports outlive the task");
    assertFalse(entry(1).retained(), "held, not retained");
    assertTrue(
        memory.used() >= size, "held by its exports alone, it is in storage memory, export's too");
    for (int i = 0; i < 3; i++) {
      exports.get(i).close();
      assertEquals(2 - i, cache.outstandingHolds().size());
    }
    assertTrue(entry(1).retained(), "idle after the last release, the entry is retained");
    assertEquals(size, memory.used(), "the export's own memory went before the entry's bytes");
    assertEquals(0, cache.counters().doubleReleases());
    closeAndAssertAllFreed();
  }

  @Test
  void releasesOnOtherThreadsAfterTheirTasksInAnyOrderFreeTheEntryOnce() throws Exception {
    assertReleasesOnOtherThreadsFreeTheEntryOnce(3, this::exportAndImport);
  }

  @Test
  void aDroppedEntryStaysForItsExportsUntilTheLastRelease() throws Exception {
    assertADroppedEntryGoesAtTheRelease(exportedPastItsTask("consumer"));
  }

  @Test
  void pressureWaitsForTheLastReleaseThenTheEntrysBytesGo() throws Exception {
    retainingCache(10 * size, 100 * size);
    // Broadcast 1 retained: pressure may take it; broadcast 2 exported: pressure must wait.
    FakeTask before = new FakeTask();
    cache.open(first, before, true);
    before.complete();
    assertTrue(entry(1).retained());
    FirstBatch exported = new FirstBatch(first.withId(2), "consumer");
    exported.task.complete();
    // Spark's own blocks take all but half an entry of what the two entries left free.
    long sparkBlocks = sparkBlocksLeaving(size / 2);
    cache.checkRetained();
    assertNull(entry(1), "pressure evicts the idle entry");
    assertEquals(1, holders(2), "but not the exported one");
    assertEquals(exported.expected, exported.imported.root.contentToTSVString(), "still readable");

    exported.imported.close();
    assertNull(entry(2), "under pressure, it goes once its last release made it idle");
    releaseSparkBlocksAndAssertAllFreed(sparkBlocks);
  }

  @Test
  void aKilledTasksExportsStayUntilReleasedAndItCannotExportAfter() throws Exception {
    FirstBatch exported = new FirstBatch(first, "consumer");
    exported.task.kill("stage cancelled");
    exported.task.complete();
    long allocated = allocator.getAllocatedMemory();
    assertThrows(IllegalStateException.class, () -> exportAndImport(exported.reader, "too late"));
    assertEquals(1, cache.outstandingHolds().size(), "the refused export holds nothing");
    assertEquals(allocated, allocator.getAllocatedMemory(), "nor allocates anything");
    assertEquals(1, holders(1));
    assertEquals(exported.expected, exported.imported.root.contentToTSVString());

    Future<?> release = executor.submit(exported.imported::close);
    release.get();
    assertFreedAtTheLastRelease();
  }

  @Test
  void aClosedReaderOrOneWithoutACurrentBatchCannotExport() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    long allocated = allocator.getAllocatedMemory();
    IllegalStateException none =
        assertThrows(IllegalStateException.class, () -> exportAndImport(reader, "consumer"));
    assertTrue(none.getMessage().contains("no current batch"), none.getMessage());
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer)) {
      reader.close();
      assertThrows(
          IllegalStateException.class, () -> CDataExport.exportStream(reader, "consumer", stream));
    }
    assertThrows(IllegalStateException.class, () -> exportAndImport(reader, "consumer"));
    assertTrue(cache.outstandingHolds().isEmpty());
    assertEquals(allocated, allocator.getAllocatedMemory());
    task.complete();
  }

  @Test
  void anExportThatFailsLeavesNothingHeldOrAllocated() throws Exception {
    // The entry may take exactly its decode's bytes: the exporter's first allocation fails.
    DecodedBroadcastCache tight = caches.with(decoder, size);
    FakeTask task = new FakeTask();
    BroadcastReader reader = tight.open(first, task, true);
    assertTrue(reader.next());
    assertThrows(RuntimeException.class, () -> exportAndImport(reader, "consumer"));
    assertEquals(size, allocator.getAllocatedMemory(), "the decode's bytes alone");
    task.complete();
    assertTrue(tight.outstandingHolds().isEmpty(), "the task's lease ended with it");
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void aChildMovedOutAndReleasedAfterItsParentKeepsTheEntryUntilThen() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAtFirstBatch(first, task);
    ArrowRecordBatch shared = reader.currentBatch();
    try (ArrowArray array = ArrowArray.allocateNew(consumer);
        ArrowArray moved = ArrowArray.allocateNew(consumer)) {
      CDataExport.exportBatch(reader, "native consumer", array, null);
      task.complete();
      // As the C Data Interface allows: move the first column out, then release the batch.
      ArrowArray.Snapshot batch = array.snapshot();
      assertTrue(batch.n_children > 0);
      ByteBuffer children =
          MemoryUtil.directBuffer(batch.children, (int) batch.n_children * Long.BYTES)
              .order(ByteOrder.nativeOrder());
      ArrowArray child = ArrowArray.wrap(children.getLong(0));
      moved.save(child.snapshot());
      child.markReleased();
      array.release();
      assertEquals(1, holders(1), "the moved column still holds the entry");
      ArrowArray.Snapshot column = moved.snapshot();
      ByteBuffer buffers =
          MemoryUtil.directBuffer(column.buffers, (int) column.n_buffers * Long.BYTES)
              .order(ByteOrder.nativeOrder());
      assertEquals(shared.getBuffers().get(1).memoryAddress(), buffers.getLong(Long.BYTES));
      assertTrue(shared.getBuffers().get(1).refCnt() > 0, "the column's buffer is still live");

      moved.release();
    }
    assertNull(entry(1), "the last release freed it");
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void theSchemaIsReleasedOnItsOwnAndTheEntryWaitsForBoth() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAtFirstBatch(first, task);
    try (ArrowArray array = ArrowArray.allocateNew(consumer);
        ArrowSchema schema = ArrowSchema.allocateNew(consumer)) {
      CDataExport.exportBatch(reader, "consumer", array, schema);
      task.complete();
      array.release();
      assertEquals(1, holders(1), "the schema is not released yet");
      schema.release();
    }
    assertNull(entry(1));
  }

  @Test
  void aStreamReadFullyOnAnotherThreadAfterItsTaskSeesEveryBatchLeft() throws Exception {
    TestBroadcast streams =
        encode(3, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {100, 50}, new int[] {70});
    List<String> expected = new ArrayList<>();
    List<List<Long>> addresses = new ArrayList<>();
    FakeTask reading = new FakeTask();
    BroadcastReader all = cache.open(streams, reading, true);
    while (all.next()) {
      expected.add(all.current().contentToTSVString());
      List<Long> batch = new ArrayList<>();
      for (ArrowBuf buffer : all.currentBatch().getBuffers()) {
        batch.add(buffer.memoryAddress());
      }
      addresses.add(batch);
    }
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(streams, task, true);
    assertTrue(reader.next(), "the stream takes the batches after the first");
    ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer);
    CDataExport.exportStream(reader, "stream consumer", stream);
    assertFalse(reader.next(), "the stream took the rest of the reader");
    complete(task, reading);
    assertEquals(1, holders(3), "the stream holds the entry past its task");

    List<String> read =
        executor
            .submit(
                () -> {
                  List<String> seen = new ArrayList<>();
                  try (ArrowReader imported = Data.importArrayStream(consumer, stream)) {
                    while (imported.loadNextBatch()) {
                      VectorSchemaRoot root = imported.getVectorSchemaRoot();
                      seen.add(root.contentToTSVString());
                      try (ArrowRecordBatch b = new VectorUnloader(root).getRecordBatch()) {
                        List<Long> batch = new ArrayList<>();
                        for (ArrowBuf buffer : b.getBuffers()) {
                          batch.add(buffer.memoryAddress());
                        }
                        assertEquals(addresses.get(seen.size()), batch, "zero copy");
                      }
                    }
                  } finally {
                    stream.close();
                  }
                  return seen;
                })
            .get();
    assertEquals(expected.subList(1, 3), read);
    assertNull(entry(3), "the stream's release ended its hold");
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void aStreamReadPartlyAndReleasedEndsItsHold() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer)) {
      CDataExport.exportStream(reader, "stream consumer", stream);
      try (ArrowReader imported = Data.importArrayStream(consumer, stream)) {
        assertTrue(imported.loadNextBatch());
        assertEquals(400, imported.getVectorSchemaRoot().getRowCount());
        task.complete();
        assertEquals(1, holders(1));
      }
    }
    assertFreedAtTheLastRelease();
  }

  @Test
  void anEmptyStreamStillHoldsUntilReleased() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    while (reader.next()) {
      // read to the end
    }
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer)) {
      CDataExport.exportStream(reader, "stream consumer", stream);
      task.complete();
      assertEquals(1, holders(1));
      try (ArrowReader imported = Data.importArrayStream(consumer, stream)) {
        assertEquals(3, imported.getVectorSchemaRoot().getSchema().getFields().size());
        assertFalse(imported.loadNextBatch());
      }
    }
    assertNull(entry(1));
  }

  @Test
  void dictionaryEncodedColumnsAreExportedWithTheirDictionaries() throws Exception {
    TestBroadcast dictionary =
        encode(4, Shape.DICTIONARY, SparkStreamCodec.LZ4, new int[] {60, 40}, new int[] {30});
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAtFirstBatch(dictionary, task);
    Dictionary shared = reader.dictionaries().lookup(TestBroadcast.COLOR_DICTIONARY_ID);
    String values = shared.getVector().toString();
    String indices = reader.current().contentToTSVString();
    Imported imported = exportAndImport(reader, "consumer");
    assertEquals(indices, imported.root.contentToTSVString());
    FieldVector importedDictionary =
        imported
            .dictionaries
            .lookup(imported.dictionaries.getDictionaryIds().iterator().next())
            .getVector();
    assertEquals(values, importedDictionary.toString());

    ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer);
    CDataExport.exportStream(reader, "stream consumer", stream);
    task.complete();
    int batches = 0;
    try (ArrowReader rest = Data.importArrayStream(consumer, stream)) {
      while (rest.loadNextBatch()) {
        batches++;
        for (long id : rest.getDictionaryIds()) {
          assertEquals(values, rest.lookup(id).getVector().toString());
        }
      }
    } finally {
      stream.close();
    }
    assertEquals(2, batches);
    assertEquals(1, cache.outstandingHolds().size(), "the batch export is still out");
    imported.close();
    assertTrue(cache.outstandingHolds().isEmpty());
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void aSharedDictionaryEntryExportsInPlaceFromEachTaskAndOnceRetained() throws Exception {
    retainingCache(100 * size, 1000 * size);
    TestBroadcast dictionary = encode(4, Shape.DICTIONARY, SparkStreamCodec.LZ4, new int[] {60});
    List<FakeTask> tasks = newTasks(3);
    List<Imported> exports = new ArrayList<>();
    for (FakeTask task : tasks.subList(0, 2)) {
      BroadcastReader reader = openAtFirstBatch(dictionary, task);
      exports.add(exportAndImport(reader, "consumer of task " + task.attemptId()));
      assertDictionaryExportedInPlace(reader, exports.get(exports.size() - 1));
    }
    complete(tasks.get(0), tasks.get(1));
    assertEquals(2, holders(4), "the exports hold the shared entry past their tasks");
    exports.get(1).close();
    exports.get(0).close();
    assertTrue(entry(4).retained(), "idle after the last release, the entry is retained");

    BroadcastReader later = openAtFirstBatch(dictionary, tasks.get(2));
    assertEquals(BroadcastReader.Served.RETAINED, later.served());
    try (Imported imported = exportAndImport(later, "consumer of the retained entry")) {
      assertDictionaryExportedInPlace(later, imported);
    }
    tasks.get(2).complete();
    assertEquals(1, decoder.calls());
    closeAndAssertAllFreed();
  }

  /**
   * {@code imported} holds the reader's batch, its dictionary at the shared dictionary's address.
   */
  private static void assertDictionaryExportedInPlace(BroadcastReader reader, Imported imported) {
    assertSameValues(reader, imported.root);
    VarCharVector shared =
        (VarCharVector)
            reader
                .broadcast()
                .streams()
                .get(reader.streamIndex())
                .lookup(TestBroadcast.COLOR_DICTIONARY_ID)
                .getVector();
    long id = imported.dictionaries.getDictionaryIds().iterator().next();
    VarCharVector exported = (VarCharVector) imported.dictionaries.lookup(id).getVector();
    assertEquals(shared.toString(), exported.toString());
    assertEquals(
        shared.getDataBuffer().memoryAddress(),
        exported.getDataBuffer().memoryAddress(),
        "the exported dictionary is a copy");
  }

  @Test
  void aBroadcastOfNoColumnsExportsItsRowCounts() throws Exception {
    TestBroadcast empty = encode(5, Shape.ZERO_COLUMNS, SparkStreamCodec.LZ4, new int[] {12});
    FakeTask task = new FakeTask();
    BroadcastReader reader = openAtFirstBatch(empty, task);
    try (Imported imported = exportAndImport(reader, "consumer")) {
      assertEquals(12, imported.root.getRowCount());
      assertEquals(0, imported.root.getFieldVectors().size());
    }
    // Java's importer keeps no buffer of such a batch, and so releases it at once: export alone.
    try (ArrowArray array = ArrowArray.allocateNew(consumer)) {
      CDataExport.exportBatch(reader, "consumer", array, null);
      task.complete();
      assertEquals(1, cache.outstandingHolds().size());
      assertEquals(12, array.snapshot().length);
      array.release();
    }
    assertTrue(cache.outstandingHolds().isEmpty());
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void anExportOutAtTheCachesCloseIsALeakAndMayBeReleasedAfter() throws Exception {
    FirstBatch exported = exportedPastItsTask("native consumer 9");
    assertALeakAtCloseGoesAtTheRelease(exported, "native consumer 9", exported.task);
  }
}
