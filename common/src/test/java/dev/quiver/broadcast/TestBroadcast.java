package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.testing.InMemoryBroadcast;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A real broadcast for the cache tests: Arrow IPC streams encoded with {@link ArrowIpc} into byte
 * arrays, plus what a reader must find in them, batch by batch. Keys run on across every batch of
 * every stream, so each batch's values are distinct.
 */
final class TestBroadcast extends InMemoryBroadcast {

  /** What the broadcast's batches hold. */
  enum Shape {
    /** {@link TestData#buildSide}: k, v = k * 31 + 7, s = "value-" + k. */
    BUILD_SIDE,
    /** {@link TestData#dictionaryIndices}: k, and d, "color-" + (k % 3) through a dictionary. */
    DICTIONARY,
    /** No columns at all; only the row count. */
    ZERO_COLUMNS
  }

  static final long COLOR_DICTIONARY_ID = 5L;

  /** One batch as a reader must see it. */
  static final class ExpectedBatch {
    final int stream;
    final long firstKey;
    final int rows;

    ExpectedBatch(int stream, long firstKey, int rows) {
      this.stream = stream;
      this.firstKey = firstKey;
      this.rows = rows;
    }

    @Override
    public String toString() {
      return "stream " + stream + " keys " + firstKey + ".." + (firstKey + rows - 1);
    }
  }

  private final Shape shape;
  private final List<ExpectedBatch> batches;

  private TestBroadcast(
      long id, Shape shape, StreamCodec codec, List<byte[]> streams, List<ExpectedBatch> batches) {
    super(id, codec, streams, true);
    this.shape = shape;
    this.batches = batches;
  }

  /**
   * Encodes a broadcast: one argument per stream, giving the row count of each of its batches
   * ({@code new int[0]} for a stream with no batches; no argument at all for no streams).
   */
  static TestBroadcast encode(
      long id, Shape shape, StreamCodec codec, BufferAllocator allocator, int[]... streamBatchRows)
      throws IOException {
    List<byte[]> streams = new ArrayList<>();
    List<ExpectedBatch> all = new ArrayList<>();
    long nextKey = id * 1_000_000L;
    try (BufferAllocator encoding = allocator.newChildAllocator("encode", 0, Long.MAX_VALUE)) {
      for (int s = 0; s < streamBatchRows.length; s++) {
        List<ExpectedBatch> inStream = new ArrayList<>();
        for (int rows : streamBatchRows[s]) {
          inStream.add(new ExpectedBatch(s, nextKey, rows));
          nextKey += rows;
        }
        streams.add(encodeStream(shape, inStream, codec, encoding));
        all.addAll(inStream);
      }
    }
    return new TestBroadcast(
        id, shape, codec, Collections.unmodifiableList(streams), Collections.unmodifiableList(all));
  }

  /** The same streams under another broadcast id. */
  TestBroadcast withId(long otherId) {
    return new TestBroadcast(otherId, shape, codec(), streams(), batches);
  }

  Shape shape() {
    return shape;
  }

  List<ExpectedBatch> batches() {
    return batches;
  }

  long totalRows() {
    long rows = 0;
    for (ExpectedBatch b : batches) {
      rows += b.rows;
    }
    return rows;
  }

  @Override
  public String toString() {
    return "broadcast "
        + broadcastId()
        + " ("
        + shape
        + ", "
        + streamCount()
        + " streams, "
        + codec()
        + ")";
  }

  /**
   * Checks one batch's columns: {@code vectors} (a view's, or vectors transferred out of one) hold
   * {@code expected}'s rows. {@code dictionaries} resolves dictionary-encoded columns.
   */
  void check(
      ExpectedBatch expected,
      List<FieldVector> vectors,
      int rowCount,
      DictionaryProvider dictionaries) {
    assertEquals(expected.rows, rowCount, () -> "row count of " + expected);
    switch (shape) {
      case ZERO_COLUMNS:
        assertEquals(0, vectors.size(), "zero-column batch has columns");
        return;
      case BUILD_SIDE:
        {
          assertEquals(3, vectors.size());
          BigIntVector k = (BigIntVector) vectors.get(0);
          BigIntVector v = (BigIntVector) vectors.get(1);
          VarCharVector s = (VarCharVector) vectors.get(2);
          assertEquals(expected.rows, k.getValueCount());
          for (int r = 0; r < expected.rows; r++) {
            long key = expected.firstKey + r;
            assertEquals(key, k.get(r), "k");
            assertEquals(key * 31 + 7, v.get(r), "v");
            assertEquals("value-" + key, new String(s.get(r), StandardCharsets.UTF_8), "s");
          }
          return;
        }
      case DICTIONARY:
        {
          assertEquals(2, vectors.size());
          BigIntVector k = (BigIntVector) vectors.get(0);
          IntVector indices = (IntVector) vectors.get(1);
          Dictionary dictionary = dictionaries.lookup(COLOR_DICTIONARY_ID);
          assertNotNull(dictionary, "dictionary " + COLOR_DICTIONARY_ID + " missing");
          VarCharVector colors = (VarCharVector) dictionary.getVector();
          assertEquals(TestData.COLORS, colors.getValueCount());
          for (int r = 0; r < expected.rows; r++) {
            long key = expected.firstKey + r;
            assertEquals(key, k.get(r), "k");
            String color = new String(colors.get(indices.get(r)), StandardCharsets.UTF_8);
            assertEquals("color-" + (key % TestData.COLORS), color, "d");
          }
          return;
        }
    }
    throw new AssertionError(shape);
  }

  /** Checks a view the reader returned. */
  void check(ExpectedBatch expected, VectorSchemaRoot view, DictionaryProvider dictionaries) {
    check(expected, view.getFieldVectors(), view.getRowCount(), dictionaries);
  }

  private static byte[] encodeStream(
      Shape shape, List<ExpectedBatch> batches, StreamCodec codec, BufferAllocator allocator)
      throws IOException {
    List<ArrowRecordBatch> records = new ArrayList<>();
    DictionaryProvider.MapDictionaryProvider dictionaries =
        new DictionaryProvider.MapDictionaryProvider();
    List<AutoCloseable> owned = new ArrayList<>();
    try {
      if (shape == Shape.DICTIONARY) {
        Dictionary colors = TestData.colorDictionary(allocator, COLOR_DICTIONARY_ID);
        owned.add(colors.getVector());
        dictionaries.put(colors);
      }
      for (ExpectedBatch b : batches) {
        try (VectorSchemaRoot root = root(shape, b, allocator)) {
          ArrowRecordBatch record = new VectorUnloader(root).getRecordBatch();
          owned.add(record);
          records.add(record);
        }
      }
      return ArrowIpc.encode(schema(shape), records, dictionaries, codec, allocator);
    } finally {
      AutoCloseables.closeNoChecked(AutoCloseables.all(owned));
    }
  }

  private static Schema schema(Shape shape) {
    switch (shape) {
      case BUILD_SIDE:
        return TestData.buildSideSchema();
      case DICTIONARY:
        return TestData.dictionarySchema(COLOR_DICTIONARY_ID);
      case ZERO_COLUMNS:
        return new Schema(Collections.emptyList());
    }
    throw new AssertionError(shape);
  }

  private static VectorSchemaRoot root(Shape shape, ExpectedBatch b, BufferAllocator allocator) {
    switch (shape) {
      case BUILD_SIDE:
        return TestData.buildSide(allocator, b.firstKey, b.rows);
      case DICTIONARY:
        return TestData.dictionaryIndices(allocator, COLOR_DICTIONARY_ID, b.firstKey, b.rows);
      case ZERO_COLUMNS:
        return TestData.zeroColumns(allocator, b.rows);
    }
    throw new AssertionError(shape);
  }
}
