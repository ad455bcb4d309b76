package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static dev.quiver.ipc.IpcTestSupport.encodeBatches;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.EncodedColumns;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class CoalescerTest extends AllocatorTestBase {

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void manyStreamsBecomeOneBatchWithTheRowsInOrder(StreamCodec codec) throws IOException {
    List<byte[]> streams = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    long seed = 100;
    for (int s = 0; s < 5; s++) {
      // Three batches per stream, sizes differing between streams, one batch empty.
      int[] sizes = {5 + 13 * s, s == 2 ? 0 : s + 1, 40 - s};
      List<VectorSchemaRoot> batches = new ArrayList<>();
      try {
        for (int size : sizes) {
          VectorSchemaRoot root = TestData.allTypes(allocator, size, seed++);
          batches.add(root);
          expected.addAll(rows(root));
        }
        streams.add(encodeBatches(TestData.allTypesSchema(), batches, null, codec, allocator));
      } finally {
        batches.forEach(VectorSchemaRoot::close);
      }
    }

    Coalescer.Result result = Coalescer.coalesce(streams, codec, allocator);

    assertTrue(result.coalesced());
    assertEquals(5, result.inputStreams());
    assertEquals(15, result.inputBatches());
    assertEquals(expected.size(), result.rows());
    assertEquals(1, result.streams().size());
    assertEquals(result.streams().get(0).length, result.bytes());
    try (DecodedStream merged =
        ArrowIpc.decode(result.streams().get(0), codec, allocator, "coalesced")) {
      assertEquals(TestData.allTypesSchema(), merged.schema());
      assertEquals(1, merged.batches().size());
      assertEquals(expected, allRows(merged, allocator));
    }
  }

  @Test
  void streamsWithDictionariesAreReturnedUnchanged() throws IOException {
    List<byte[]> streams = Arrays.asList(dictionaryStream("a", "b"), dictionaryStream("c", "d"));

    Coalescer.Result result = Coalescer.coalesce(streams, SparkStreamCodec.LZ4, allocator);

    assertFalse(result.coalesced());
    assertEquals(2, result.streams().size());
    assertSame(streams.get(0), result.streams().get(0));
    assertSame(streams.get(1), result.streams().get(1));
    assertEquals(2, result.inputStreams());
    assertEquals(2, result.inputBatches());
    assertEquals(4, result.rows());
  }

  @Test
  void streamsWithViewTypesAreReturnedUnchanged() throws IOException {
    assumeTrue(EncodedColumns.viewTypesKnown(), "this Arrow Java has no view types");
    byte[] stream;
    try (VectorSchemaRoot views = EncodedColumns.views(allocator)) {
      stream = ArrowIpc.encode(views, null, SparkStreamCodec.LZ4);
    }
    List<byte[]> streams = Arrays.asList(stream, stream);

    // Arrow's appender would throw on the list views.
    Coalescer.Result result = Coalescer.coalesce(streams, SparkStreamCodec.LZ4, allocator);

    assertFalse(result.coalesced());
    assertSame(streams.get(1), result.streams().get(1));
    assertEquals(12, result.rows());
  }

  @Test
  void emptyInputGivesNoStream() throws IOException {
    Coalescer.Result result =
        Coalescer.coalesce(Collections.emptyList(), SparkStreamCodec.LZ4, allocator);

    assertTrue(result.streams().isEmpty());
    assertEquals(0, result.inputStreams());
    assertEquals(0, result.inputBatches());
    assertEquals(0, result.rows());
    assertEquals(0, result.bytes());
  }

  @Test
  void inputWithoutRowsGivesNoStream() throws IOException {
    List<byte[]> streams = new ArrayList<>();
    try (VectorSchemaRoot empty = TestData.allTypes(allocator, 0, 1)) {
      streams.add(ArrowIpc.encode(empty, null, SparkStreamCodec.ZSTD));
      streams.add(
          encodeBatches(
              TestData.allTypesSchema(),
              Arrays.asList(empty, empty),
              null,
              SparkStreamCodec.ZSTD,
              allocator));
    }
    // A stream with a schema and no batch at all.
    streams.add(
        ArrowIpc.encode(
            TestData.allTypesSchema(),
            Collections.emptyList(),
            null,
            SparkStreamCodec.ZSTD,
            allocator));

    Coalescer.Result result = Coalescer.coalesce(streams, SparkStreamCodec.ZSTD, allocator);

    assertTrue(result.streams().isEmpty());
    assertEquals(3, result.inputStreams());
    assertEquals(3, result.inputBatches());
    assertEquals(0, result.rows());
  }

  @Test
  void singleOneBatchStreamIsReturnedAsIs() throws IOException {
    byte[] stream =
        IpcTestSupport.streamOf(TestData.buildSide(allocator, 1000, 64), SparkStreamCodec.LZ4);

    Coalescer.Result result =
        Coalescer.coalesce(Collections.singletonList(stream), SparkStreamCodec.LZ4, allocator);

    assertFalse(result.coalesced());
    assertEquals(1, result.streams().size());
    assertSame(stream, result.streams().get(0));
    assertEquals(1, result.inputBatches());
    assertEquals(64, result.rows());
  }

  @Test
  void mismatchedSchemasAreRejectedNamingTheStream() throws IOException {
    List<byte[]> streams = new ArrayList<>();
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 10);
        VectorSchemaRoot b = TestData.buildSide(allocator, 10, 10);
        VectorSchemaRoot c = TestData.allTypes(allocator, 10, 1)) {
      streams.add(ArrowIpc.encode(a, null, SparkStreamCodec.LZ4));
      streams.add(ArrowIpc.encode(b, null, SparkStreamCodec.LZ4));
      streams.add(ArrowIpc.encode(c, null, SparkStreamCodec.LZ4));
    }

    IpcFormatException e =
        assertThrows(
            IpcFormatException.class,
            () -> Coalescer.coalesce(streams, SparkStreamCodec.LZ4, allocator));

    assertTrue(e.getMessage().contains("coalesce input stream 2"), e.getMessage());
    assertTrue(e.getMessage().contains("schema"), e.getMessage());
  }

  @Test
  void corruptInputStreamIsReportedByIndex() throws IOException {
    List<byte[]> streams = new ArrayList<>();
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 10)) {
      streams.add(ArrowIpc.encode(a, null, SparkStreamCodec.LZ4));
      byte[] cut = ArrowIpc.encode(a, null, SparkStreamCodec.LZ4);
      streams.add(Arrays.copyOf(cut, cut.length / 2));
    }

    IpcFormatException e =
        assertThrows(
            IpcFormatException.class,
            () -> Coalescer.coalesce(streams, SparkStreamCodec.LZ4, allocator));

    assertTrue(e.getMessage().contains("coalesce input stream 1"), e.getMessage());
  }

  @Test
  void zeroColumnStreamsCoalesceWithSummedRowCounts() throws IOException {
    Schema noFields = new Schema(Collections.emptyList());
    List<byte[]> streams = new ArrayList<>();
    int[][] rowsPerStream = {{100, 23}, {0}, {250}};
    for (int[] rows : rowsPerStream) {
      List<ArrowRecordBatch> batches = new ArrayList<>();
      for (int n : rows) {
        batches.add(new ArrowRecordBatch(n, Collections.emptyList(), Collections.emptyList()));
      }
      streams.add(ArrowIpc.encode(noFields, batches, null, SparkStreamCodec.ZSTD, allocator));
      batches.forEach(ArrowRecordBatch::close);
    }

    Coalescer.Result result = Coalescer.coalesce(streams, SparkStreamCodec.ZSTD, allocator);

    assertTrue(result.coalesced());
    assertEquals(4, result.inputBatches());
    assertEquals(373, result.rows());
    assertEquals(1, result.streams().size());
    try (DecodedStream merged =
        ArrowIpc.decode(
            result.streams().get(0), SparkStreamCodec.ZSTD, allocator, "zero columns")) {
      assertEquals(noFields, merged.schema());
      assertEquals(1, merged.batches().size());
      assertEquals(373, merged.batches().get(0).getLength());
    }
  }

  /** An lz4 stream whose one column is dictionary-encoded with {@code values}, one row each. */
  private byte[] dictionaryStream(String... values) throws IOException {
    DictionaryEncoding encoding = new DictionaryEncoding(1, false, new ArrowType.Int(32, true));
    Schema ipcSchema =
        new Schema(
            Collections.singletonList(
                new Field("s", new FieldType(true, ArrowType.Utf8.INSTANCE, encoding), null)));
    Schema indexSchema =
        new Schema(
            Collections.singletonList(
                new Field("s", new FieldType(true, encoding.getIndexType(), encoding), null)));
    try (VarCharVector dictionary = new VarCharVector("d", allocator);
        VectorSchemaRoot batch = VectorSchemaRoot.create(indexSchema, allocator)) {
      dictionary.allocateNew(values.length);
      IntVector indices = (IntVector) batch.getVector("s");
      indices.allocateNew(values.length);
      for (int i = 0; i < values.length; i++) {
        dictionary.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
        indices.set(i, i);
      }
      dictionary.setValueCount(values.length);
      batch.setRowCount(values.length);
      return new RawStreamWriter()
          .schema(ipcSchema)
          .dictionary(1, dictionary, false)
          .batch(batch)
          .end()
          .compressed(SparkStreamCodec.LZ4);
    }
  }
}
