package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.assertReadsAsArrowReads;
import static dev.quiver.ipc.IpcTestSupport.batchRows;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.flatbuffers.FlatBufferBuilder;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.BigEndianStreams;
import dev.quiver.testing.EncodedColumns;
import dev.quiver.testing.EveryType;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Big-endian streams: each is the twin of a little-endian stream Arrow Java writes, the same data
 * written as a big-endian machine would ({@link BigEndianStreams}); Quiver's decode of the twin
 * must equal Arrow Java's decode of the original, for every type, nested types, dictionaries and
 * body compression. Bad big-endian batches are refused as bad little-endian ones are, their values
 * read in the right order.
 */
class IpcBigEndianTest extends AllocatorTestBase {

  @Test
  void everyTypeReadsAsItsLittleEndianOriginal() throws IOException {
    byte[] little;
    try (VectorSchemaRoot a = EveryType.root(allocator, 50, 1);
        VectorSchemaRoot b = EveryType.root(allocator, 700, 2);
        VectorSchemaRoot empty = EveryType.root(allocator, 0, 3)) {
      little = arrowStream(null, a, b, empty);
    }
    byte[] big = BigEndianStreams.twin(little, allocator);
    assertEquals(little.length, big.length);
    assertFalse(Arrays.equals(little, big), "the twin's values are in the other order");
    assertReadsAsOriginal(little, big, "every type");
    assertReadsAsOriginal(little, big, "every type", SparkStreamCodec.ZSTD);
  }

  @Test
  void theSameValuesFlaggedLittleEndianWouldReadOtherwise() throws IOException {
    // The test's own check: the twin's bytes are not those of its original, value by value.
    byte[] little;
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0x0102, 20)) {
      little = arrowStream(null, root);
    }
    byte[] big = BigEndianStreams.twin(little, allocator);
    try (DecodedStream original = ArrowIpc.decode(little, StreamCodec.NONE, allocator, "le");
        DecodedStream twin = ArrowIpc.decode(big, StreamCodec.NONE, allocator, "be")) {
      assertEquals(batchRows(original, allocator), batchRows(twin, allocator));
    }
    byte[] flaggedLittle = flagLittle(big);
    try (ArrowStreamReader arrow =
        new ArrowStreamReader(new ByteArrayInputStream(flaggedLittle), allocator)) {
      arrow.loadNextBatch();
      assertEquals(
          Long.reverseBytes(0x0102L), arrow.getVectorSchemaRoot().getVector("k").getObject(0));
    }
  }

  @Test
  void theStandardSparkTypesReadAsTheirOriginals() throws IOException {
    try (VectorSchemaRoot a = TestData.allTypes(allocator, 30, 1);
        VectorSchemaRoot b = TestData.allTypes(allocator, 5, 2)) {
      assertTwinOfBatchesReadsAsOriginal("spark types", false, a, b);
    }
  }

  @Test
  void bodyCompressedBigEndianBatchesReadAsTheirOriginals() throws IOException {
    try (VectorSchemaRoot a = EveryType.root(allocator, 300, 4);
        VectorSchemaRoot b = EveryType.root(allocator, 9, 5)) {
      assertTwinOfBatchesReadsAsOriginal("zstd body", true, a, b);
    }
  }

  @Test
  void dictionaryEncodedColumnsReadAsTheirOriginals() throws IOException {
    org.apache.arrow.vector.dictionary.Dictionary colors = TestData.colorDictionary(allocator, 5);
    byte[] little;
    try (VectorSchemaRoot a = TestData.dictionaryIndices(allocator, 5, 0, 40);
        VectorSchemaRoot b = TestData.dictionaryIndices(allocator, 5, 7, 3)) {
      little = arrowStream(new DictionaryProvider.MapDictionaryProvider(colors), a, b);
    } finally {
      colors.getVector().close();
    }
    assertReadsAsOriginal(little, BigEndianStreams.twin(little, allocator), "dictionary");
    assertReadsAsOriginal(little, BigEndianStreams.twin(little, allocator, true), "zstd dict");
  }

  @Test
  void aNestedDictionaryReadsAsItsOriginal() throws IOException {
    byte[] little = nestedDictionaryStream();
    assertReadsAsOriginal(little, BigEndianStreams.twin(little, allocator), "nested dictionary");
  }

  @Test
  void deltaDictionariesReadAsTheirOriginals() throws IOException {
    byte[] little = DictionaryStreams.withDelta(allocator, StreamCodec.NONE);
    byte[] big = BigEndianStreams.twin(little, allocator);
    try (DecodedStream decoded = ArrowIpc.decode(big, StreamCodec.NONE, allocator, "delta");
        VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      List<List<String>> strings = new ArrayList<>();
      for (ArrowRecordBatch batch : decoded.batches()) {
        new VectorLoader(root).load(batch);
        strings.add(DictionaryStreams.decodeStrings(root, "color", decoded));
      }
      assertEquals(DictionaryStreams.WITH_DELTA_STRINGS, strings);
    }
  }

  @Test
  void anOffsetOutOfRangeOnceConvertedIsRefusedNamingItsColumn() throws IOException {
    Field strings = Field.nullable("s", ArrowType.Utf8.INSTANCE);
    // Read little-endian, 1000 (00 00 03 e8) would be negative; converted, it is past the data.
    byte[] past =
        bigEndianBatch(strings, 2)
            .node(2, 0)
            .emptyBuffer()
            .buffer(bigEndianInts(0, 2, 1000))
            .buffer("abcd".getBytes(StandardCharsets.US_ASCII))
            .stream();
    assertRefused(past, "past the data", "column s", "data buffer has 4 bytes, 1000 needed");
    // Ascending read little-endian (256 = 00 00 01 00 read as 65536); converted, descending.
    byte[] descending =
        bigEndianBatch(strings, 3)
            .node(3, 0)
            .emptyBuffer()
            .buffer(bigEndianInts(0, 1, 256, 3))
            .filledBuffer(300)
            .stream();
    assertRefused(descending, "descending", "column s", "offset 3 is 3, below 256");
  }

  @Test
  void aDictionaryIndexOutOfRangeOnceConvertedIsRefused() throws IOException {
    // Index 1 (00 00 00 01) read little-endian would be 16777216; converted, 5 is out of range.
    org.apache.arrow.vector.dictionary.Dictionary colors = TestData.colorDictionary(allocator, 5);
    byte[] little;
    try (VectorSchemaRoot root = TestData.dictionaryIndices(allocator, 5, 0, 3)) {
      ((IntVector) root.getVector("d")).set(2, 5);
      little = arrowStream(new DictionaryProvider.MapDictionaryProvider(colors), root);
    } finally {
      colors.getVector().close();
    }
    assertRefused(
        BigEndianStreams.twin(little, allocator), "index", "column d", "row 2 has index 5");
  }

  @Test
  void buffersSharingTheBodysBytesAreRefusedBeforeTheirCopiesAreAllocated() throws IOException {
    // Four int64 columns whose data buffers are all the same 8 KiB of the body: converted, each
    // would take 8 KiB of its own.
    int rows = 1024;
    List<Field> fields = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      fields.add(Field.notNullable("l" + c, new ArrowType.Int(64, true)));
    }
    byte[] stream =
        new RawStreamWriter()
            .metadata(bigEndianSchema(fields))
            .bytes(sharedBuffersBatch(rows, fields.size()))
            .end()
            .toByteArray();
    assertRefused(stream, "shared", "share bytes");
  }

  @Test
  void aFixedSizeBinaryOfNegativeWidthIsRefusedOnEveryPath() throws IOException {
    // A fuzzer's finding (on the little-endian path too): Arrow's layout of such a type throws.
    Field field;
    try {
      field = Field.nullable("f", new ArrowType.FixedSizeBinary(-16777211));
    } catch (IllegalArgumentException e) {
      // Arrow before 13 lays the type out as it makes the field: such a schema does not parse.
      Assumptions.assumeTrue(false, "this Arrow cannot make the field: " + e);
      return;
    }
    String says = "column f has type FixedSizeBinary(-16777211), which has no buffer layout";
    byte[] little =
        new HostileBatch(allocator, field, 1).node(1, 0).emptyBuffer().filledBuffer(8).stream();
    assertRefused(little, "little", says);
    byte[] compressed =
        new HostileBatch(allocator, field, 1)
            .node(1, 0).emptyBuffer().filledBuffer(8).flaggedCompressed().stream();
    assertRefused(compressed, "compressed", says);
    byte[] big = bigEndianBatch(field, 1).node(1, 0).emptyBuffer().filledBuffer(8).stream();
    assertRefused(big, "big", says);
  }

  @Test
  void unionsAndRunEndEncodingReadAsTheirOriginals() throws IOException {
    try (VectorSchemaRoot root = EncodedColumns.unionsAndRuns(allocator)) {
      assertTwinReadsAsOriginal(root, "unions and runs", "offsets and run ends");
    }
  }

  @Test
  void viewsReadAsTheirOriginals() throws IOException {
    Assumptions.assumeTrue(EncodedColumns.viewTypesKnown(), "this Arrow Java has no view types");
    try (VectorSchemaRoot views = EncodedColumns.views(allocator)) {
      assertTwinReadsAsOriginal(views, "views", "views, offsets and sizes");
    }
  }

  @Test
  void aBigEndianViewOutsideItsDataBufferIsRefused() throws IOException {
    Assumptions.assumeTrue(EncodedColumns.viewTypesKnown(), "this Arrow Java has no view types");
    byte[] little;
    try (VectorSchemaRoot views = EncodedColumns.views(allocator)) {
      // Row 2's string is out of line: its offset, read in the right order, is far outside.
      views.getVector("v").getFieldBuffers().get(1).setInt(2 * 16L + 12, 1 << 20);
      little = arrowStream(null, views);
    }
    assertRefused(
        BigEndianStreams.twin(little, allocator),
        "big view",
        "column v: row 2's view takes bytes " + (1 << 20));
  }

  @Test
  void aTypeThatDoesNotConvertIsRefusedByName() {
    // Every type Quiver reads converts; an integer of 24 bits is no Arrow type, and no width.
    // Arrow 11 and 12 make no field of it at all (their Field works out its buffer layout).
    Field odd;
    try {
      odd = Field.nullable("odd", new ArrowType.Int(24, true));
    } catch (IllegalArgumentException e) {
      Assumptions.abort("this Arrow makes no field of a type without a buffer layout");
      return;
    }
    Field struct = new Field("outer", FieldType.nullable(ArrowType.Struct.INSTANCE), List.of(odd));
    IpcFormatException e =
        assertThrows(
            IpcFormatException.class, () -> BigEndianConversion.checkConvertible(List.of(struct)));
    assertTrue(e.getMessage().contains("column odd has type Int(24, true)"), e.getMessage());
    assertTrue(e.getMessage().contains("big-endian"), e.getMessage());
  }

  /**
   * Asserts Quiver decodes {@code big} (compressed with {@code codec}) to what Arrow Java decodes
   * from {@code little}: the same rows batch by batch, and the same dictionaries.
   */
  private void assertReadsAsOriginal(byte[] little, byte[] big, String source, StreamCodec codec)
      throws IOException {
    assertReadsAsArrowReads(little, big, codec, allocator, source);
  }

  /**
   * Asserts that the big-endian twin of {@code original}'s stream is not that stream byte for byte
   * (its {@code reversed} are in the other order) and reads as the original.
   */
  private void assertTwinReadsAsOriginal(VectorSchemaRoot original, String source, String reversed)
      throws IOException {
    byte[] little = arrowStream(null, original);
    byte[] big = BigEndianStreams.twin(little, allocator);
    assertFalse(Arrays.equals(little, big), "the twin's " + reversed + " are reversed");
    assertReadsAsOriginal(little, big, source);
  }

  /**
   * Asserts that the big-endian twin of {@code batches}' stream, its bodies zstd-compressed when
   * {@code zstd}, reads as the original.
   */
  private void assertTwinOfBatchesReadsAsOriginal(
      String source, boolean zstd, VectorSchemaRoot... batches) throws IOException {
    byte[] little = arrowStream(null, batches);
    assertReadsAsOriginal(little, BigEndianStreams.twin(little, allocator, zstd), source);
  }

  private void assertReadsAsOriginal(byte[] little, byte[] big, String source) throws IOException {
    assertReadsAsOriginal(little, big, source, StreamCodec.NONE);
  }

  /** {@code batches} (one schema) as Arrow Java's stream writer writes them. */
  private byte[] arrowStream(DictionaryProvider dictionaries, VectorSchemaRoot... batches)
      throws IOException {
    return IpcTestSupport.arrowStream(allocator, dictionaries, batches);
  }

  /**
   * A column {@code nd} encoded by dictionary 11, whose values are lists of strings themselves
   * encoded by dictionary 12: a dictionary batch of each, then two record batches.
   */
  private byte[] nestedDictionaryStream() throws IOException {
    DictionaryEncoding inner = new DictionaryEncoding(12, false, new ArrowType.Int(16, true));
    DictionaryEncoding outer = new DictionaryEncoding(11, false, new ArrowType.Int(64, true));
    Field ipcItem = new Field("item", new FieldType(true, ArrowType.Utf8.INSTANCE, inner), null);
    Field ipcColumn =
        new Field("nd", new FieldType(true, ArrowType.List.INSTANCE, outer), List.of(ipcItem));
    Field memoryItem = new Field("item", new FieldType(true, inner.getIndexType(), inner), null);
    Field memoryList =
        new Field("nd", FieldType.nullable(ArrowType.List.INSTANCE), List.of(memoryItem));
    Field memoryColumn = new Field("nd", new FieldType(true, outer.getIndexType(), outer), null);
    try (VarCharVector words = DictionaryStreams.strings(allocator, "w", "alpha", "beta", "gamma");
        ListVector lists = (ListVector) memoryList.createVector(allocator);
        VectorSchemaRoot batch =
            VectorSchemaRoot.create(new Schema(List.of(memoryColumn)), allocator)) {
      // Lists of word indices: [0, 2], [], [1, null, 0], null.
      int[][] values = {{0, 2}, {}, {1, -1, 0}, null};
      lists.allocateNew();
      org.apache.arrow.vector.SmallIntVector items =
          (org.apache.arrow.vector.SmallIntVector) lists.getDataVector();
      for (int i = 0; i < values.length; i++) {
        if (values[i] == null) {
          lists.setNull(i);
          continue;
        }
        int start = lists.startNewValue(i);
        for (int j = 0; j < values[i].length; j++) {
          if (values[i][j] < 0) {
            items.setNull(start + j);
          } else {
            items.setSafe(start + j, values[i][j]);
          }
        }
        lists.endValue(i, values[i].length);
      }
      lists.setValueCount(values.length);
      RawStreamWriter stream = new RawStreamWriter().schema(new Schema(List.of(ipcColumn)));
      stream.dictionary(12, words, false);
      stream.dictionary(11, lists, false);
      org.apache.arrow.vector.BigIntVector indices =
          (org.apache.arrow.vector.BigIntVector) batch.getVector("nd");
      long[][] rows = {{3, 0, 2, 2, 1}, {1, 0}};
      for (long[] r : rows) {
        indices.allocateNew(r.length);
        for (int i = 0; i < r.length; i++) {
          indices.set(i, r[i]);
        }
        batch.setRowCount(r.length);
        stream.batch(batch);
      }
      return stream.end().toByteArray();
    }
  }

  /** A batch of {@code field} under a schema flagged big-endian, written as the test gives it. */
  private HostileBatch bigEndianBatch(Field field, int rows) {
    return new HostileBatch(allocator, field, rows).schemaMessage(bigEndianSchema(List.of(field)));
  }

  private static ByteBuffer bigEndianSchema(List<Field> fields) {
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int[] offsets = new int[fields.size()];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = fields.get(i).getField(builder);
    }
    int vector = org.apache.arrow.flatbuf.Schema.createFieldsVector(builder, offsets);
    org.apache.arrow.flatbuf.Schema.startSchema(builder);
    org.apache.arrow.flatbuf.Schema.addEndianness(builder, Endianness.Big);
    org.apache.arrow.flatbuf.Schema.addFields(builder, vector);
    int schema = org.apache.arrow.flatbuf.Schema.endSchema(builder);
    return MessageSerializer.serializeMessage(
        builder, MessageHeader.Schema, schema, 0, new IpcOption());
  }

  /**
   * A record batch message of {@code columns} non-null int64 columns of {@code rows} rows whose
   * data buffers all claim the same bytes: the whole body.
   */
  private static byte[] sharedBuffersBatch(int rows, int columns) {
    long bodyLength = rows * 8L;
    FlatBufferBuilder builder = new FlatBufferBuilder();
    RecordBatch.startNodesVector(builder, columns);
    for (int c = 0; c < columns; c++) {
      FieldNode.createFieldNode(builder, rows, 0);
    }
    int nodes = builder.endVector();
    RecordBatch.startBuffersVector(builder, 2 * columns);
    for (int c = 0; c < columns; c++) {
      // Written back to front: the data buffer, then the (empty) validity bitmap.
      Buffer.createBuffer(builder, 0, bodyLength);
      Buffer.createBuffer(builder, 0, 0);
    }
    int buffers = builder.endVector();
    RecordBatch.startRecordBatch(builder);
    RecordBatch.addLength(builder, rows);
    RecordBatch.addNodes(builder, nodes);
    RecordBatch.addBuffers(builder, buffers);
    int batch = RecordBatch.endRecordBatch(builder);
    ByteBuffer metadata =
        MessageSerializer.serializeMessage(
            builder, MessageHeader.RecordBatch, batch, bodyLength, new IpcOption());
    int padded = (metadata.remaining() + 7) / 8 * 8;
    ByteBuffer message =
        ByteBuffer.allocate(8 + padded + (int) bodyLength).order(ByteOrder.LITTLE_ENDIAN);
    message.putInt(-1).putInt(padded).put(metadata);
    return message.array();
  }

  /** {@code big} with its schema flagged little-endian: the same value bytes. */
  private static byte[] flagLittle(byte[] big) throws IOException {
    try (org.apache.arrow.vector.ipc.ReadChannel in =
        new org.apache.arrow.vector.ipc.ReadChannel(
            java.nio.channels.Channels.newChannel(new ByteArrayInputStream(big)))) {
      org.apache.arrow.vector.ipc.message.MessageMetadataResult schema =
          MessageSerializer.readMessage(in);
      long rest = big.length - in.bytesRead();
      byte[] littleSchema =
          new RawStreamWriter().schema(MessageSerializer.deserializeSchema(schema)).toByteArray();
      byte[] out = Arrays.copyOf(littleSchema, littleSchema.length + (int) rest);
      System.arraycopy(big, (int) in.bytesRead(), out, littleSchema.length, (int) rest);
      return out;
    }
  }

  private static byte[] bigEndianInts(int... values) {
    ByteBuffer out = ByteBuffer.allocate(4 * values.length).order(ByteOrder.BIG_ENDIAN);
    for (int v : values) {
      out.putInt(v);
    }
    return out.array();
  }

  private IpcFormatException assertRefused(byte[] stream, String source, String... says) {
    return IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }
}
