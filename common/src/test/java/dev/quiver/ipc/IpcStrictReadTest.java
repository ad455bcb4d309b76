package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.flatbuffers.FlatBufferBuilder;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Codecs;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.MetadataVersion;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the strict reader refuses that Arrow's own reader accepts, crashes on, or reads wrongly:
 * byte order, hostile lengths (before any allocation), unchecked dictionary batches, unsupported
 * types, trailing bytes, body compression, indices outside their dictionary.
 */
@ExtendWith(AllocatorExtension.class)
class IpcStrictReadTest {

  private static final Field INTS = Field.nullable("n", new ArrowType.Int(32, true));

  private BufferAllocator allocator;

  @BeforeEach
  void useTheTestsAllocator(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  @Test
  void bigEndianStreamIsRefusedWhileTheSameBytesFlaggedLittleReadSwapped() throws IOException {
    int[] values = {1, 2, 0x01020304};
    byte[] bigEndian = intStream(values, Endianness.Big);
    IpcFormatException e = expectRefused(bigEndian, "big-endian stream");
    assertTrue(e.getMessage().contains("big-endian"), e.getMessage());

    // The same value bytes under a little-endian schema: what Arrow Java alone would return.
    int[] swapped = new int[values.length];
    for (int i = 0; i < values.length; i++) {
      swapped[i] = Integer.reverseBytes(values[i]);
    }
    byte[] flaggedLittle = intStream(values, Endianness.Little, ByteOrder.BIG_ENDIAN);
    try (DecodedStream misread =
            ArrowIpc.decode(flaggedLittle, StreamCodec.NONE, allocator, "misread");
        DecodedStream expected =
            ArrowIpc.decode(
                intStream(swapped, Endianness.Little), StreamCodec.NONE, allocator, "swapped")) {
      assertEquals(allRows(expected, allocator), allRows(misread, allocator));
    }
  }

  @Test
  void negativeAndHugeMetadataLengthsAreRefusedBeforeAllocating() throws IOException {
    for (int length : new int[] {-2, Integer.MIN_VALUE, (64 << 20) + 1}) {
      byte[] stream = prefix(length);
      // Nothing at all allocated: the length is refused before the metadata is read.
      IpcFormatException e = expectRefusedWithin(stream, "length " + length, 1);
      assertTrue(e.getMessage().contains("bytes of metadata"), e.getMessage());
    }
  }

  @Test
  void metadataClaimOfAStreamOfUnknownLengthCostsOnlyWhatArrives() {
    byte[] stream = Arrays.copyOf(prefix(60 << 20), 8 + 1000);
    long before = allocatedBytesOfThisThread();
    IpcFormatException e =
        assertThrows(
            IpcFormatException.class,
            () ->
                ArrowIpc.decode(
                    new ByteArrayInputStream(stream), StreamCodec.NONE, allocator, "claim"));
    long allocated = allocatedBytesOfThisThread() - before;
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    // One piece of heap for the metadata, not the 60 MiB claimed.
    assertTrue(allocated < 8L * ArrowIpc.UNREAD_CLAIM_BYTES, "allocated " + allocated);
  }

  @Test
  void bytesAfterTheEndOfStreamMarkerAreRefused() throws IOException {
    byte[] plain = intStream(new int[] {7}, Endianness.Little);
    byte[] trailing = Arrays.copyOf(plain, plain.length + 3);
    assertTrue(
        expectRefused(trailing, "trailing").getMessage().contains("follow the end-of-stream"));
    byte[] twoStreams = Arrays.copyOf(plain, plain.length * 2);
    System.arraycopy(plain, 0, twoStreams, plain.length, plain.length);
    byte[] compressed = Codecs.compress(SparkStreamCodec.ZSTD, twoStreams);
    IpcFormatException e =
        assertThrows(
            IpcFormatException.class,
            () -> ArrowIpc.decode(compressed, SparkStreamCodec.ZSTD, allocator, "two streams"));
    assertTrue(e.getMessage().contains("follow the end-of-stream"), e.getMessage());
  }

  @Test
  void aStreamWithoutItsEndOfStreamMarkerIsTruncation() throws IOException {
    byte[] plain = intStream(new int[] {7}, Endianness.Little);
    byte[] noMarker = Arrays.copyOf(plain, plain.length - 8);
    assertTrue(expectRefused(noMarker, "no marker").getMessage().contains("end-of-stream marker"));
  }

  @Test
  void aColumnLongerThanItsBuffersIsRefusedBeforeLoading() throws IOException {
    int rows = 1 << 26;
    byte[] stream;
    try (ArrowBuf data = allocator.buffer(4)) {
      data.setInt(0, 5);
      data.writerIndex(4);
      try (ArrowRecordBatch batch =
          new ArrowRecordBatch(
              rows,
              Collections.singletonList(new ArrowFieldNode(rows, 0)),
              Arrays.asList(allocator.getEmpty(), data))) {
        stream =
            new RawStreamWriter()
                .schema(new Schema(Collections.singletonList(INTS)))
                .message(batch)
                .end()
                .toByteArray();
      }
    }
    IpcFormatException e = expectRefusedWithin(stream, "long column", 1 << 20);
    assertTrue(e.getMessage().contains("data buffer has"), e.getMessage());
    assertTrue(e.getMessage().contains("record batch 0"), e.getMessage());
  }

  @Test
  void validityBitmapsTheLoaderWouldMakeAreBoundedByTheBody() throws IOException {
    int rows = Integer.MAX_VALUE;
    Field nulls =
        new Field(
            "s",
            FieldType.nullable(ArrowType.Struct.INSTANCE),
            Collections.singletonList(Field.nullable("z", ArrowType.Null.INSTANCE)));
    byte[] stream;
    try (ArrowRecordBatch batch =
        new ArrowRecordBatch(
            rows,
            Arrays.asList(new ArrowFieldNode(rows, 0), new ArrowFieldNode(rows, rows)),
            Collections.singletonList(allocator.getEmpty()))) {
      stream =
          new RawStreamWriter()
              .schema(new Schema(Collections.singletonList(nulls)))
              .message(batch)
              .end()
              .toByteArray();
    }
    IpcFormatException e = expectRefused(stream, "struct of nulls");
    assertTrue(e.getMessage().contains("validity bitmaps"), e.getMessage());
  }

  @Test
  void aChildShorterThanItsParentIsRefusedBeforeLoading() throws IOException {
    int rows = 1 << 22;
    Field struct =
        new Field(
            "s", FieldType.nullable(ArrowType.Struct.INSTANCE), Collections.singletonList(INTS));
    byte[] stream;
    try (ArrowBuf validity = allocator.buffer(rows / 8);
        ArrowBuf data = allocator.buffer(4)) {
      validity.setBytes(0, filled(rows / 8));
      validity.writerIndex(rows / 8);
      data.setInt(0, 5);
      data.writerIndex(4);
      try (ArrowRecordBatch batch =
          new ArrowRecordBatch(
              rows,
              Arrays.asList(new ArrowFieldNode(rows, 0), new ArrowFieldNode(1, 0)),
              Arrays.asList(validity, allocator.getEmpty(), data))) {
        stream =
            new RawStreamWriter()
                .schema(new Schema(Collections.singletonList(struct)))
                .message(batch)
                .end()
                .toByteArray();
      }
    }
    // The body (half a MiB of bitmap, rounded up) and not the 16 MiB the child would grow to.
    IpcFormatException e = expectRefusedWithin(stream, "short child", 2 << 20);
    assertTrue(e.getMessage().contains("its parent s needs " + rows), e.getMessage());
  }

  /**
   * One offset lower than the one before, anywhere: right after the first, in the middle, the last
   * one (still above the first, so no size check catches it). For 4-byte and 8-byte offsets.
   */
  @ParameterizedTest
  @CsvSource({"4, 1", "4, 2", "4, 4", "8, 1", "8, 3", "8, 4"})
  void anOffsetBelowThePreviousOneIsRefused(int width, int index) throws IOException {
    String[] values = {"aa", "bbb", "c", "dddd"};
    ArrowType type = width == 4 ? ArrowType.Utf8.INSTANCE : ArrowType.LargeUtf8.INSTANCE;
    Schema schema = new Schema(Collections.singletonList(Field.nullable("s", type)));
    byte[] stream;
    long previous;
    long lowered;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      FieldVector strings = root.getVector(0);
      for (int i = 0; i < values.length; i++) {
        byte[] bytes = values[i].getBytes(StandardCharsets.UTF_8);
        if (width == 4) {
          ((VarCharVector) strings).setSafe(i, bytes);
        } else {
          ((LargeVarCharVector) strings).setSafe(i, bytes);
        }
      }
      root.setRowCount(values.length);
      ArrowBuf offsets = strings.getOffsetBuffer();
      if (width == 4) {
        previous = offsets.getInt((index - 1) * 4L);
        lowered = previous - 1;
        offsets.setInt(index * 4L, (int) lowered);
      } else {
        previous = offsets.getLong((index - 1) * 8L);
        lowered = previous - 1;
        offsets.setLong(index * 8L, lowered);
      }
      stream =
          IpcTestSupport.encodeBatches(
              schema, Collections.singletonList(root), null, StreamCodec.NONE, allocator);
    }
    IpcFormatException e = expectRefused(stream, "descending offset");
    assertTrue(
        e.getMessage()
            .contains(
                String.format("column s: offset %d is %d, below %d", index, lowered, previous)),
        e.getMessage());
  }

  /** The unchecked reads start only once the buffer is known to hold every offset. */
  @Test
  void offsetsAreReadOnlyFromABufferThatHoldsThemAll() {
    try (ArrowBuf offsets = allocator.buffer(8)) {
      offsets.setZero(0, 8);
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class, () -> BatchChecks.checkAscending("s", offsets, 3, 4));
      assertTrue(
          e.getMessage().contains("column s: its offsets buffer has 8 bytes, 12 needed"),
          e.getMessage());
    }
  }

  @Test
  void aDictionaryBatchIsCheckedLikeARecordBatch() throws IOException {
    DictionaryEncoding encoding = new DictionaryEncoding(4, false, new ArrowType.Int(32, true));
    Field strings = new Field("s", new FieldType(true, ArrowType.Utf8.INSTANCE, encoding), null);
    int values = 1 << 28;
    byte[] stream;
    try (ArrowBuf offsets = allocator.buffer(8)) {
      offsets.setZero(0, 8);
      offsets.writerIndex(8);
      try (ArrowRecordBatch data =
              new ArrowRecordBatch(
                  values,
                  Collections.singletonList(new ArrowFieldNode(values, 0)),
                  Arrays.asList(allocator.getEmpty(), offsets, allocator.getEmpty()));
          ArrowDictionaryBatch dictionary = new ArrowDictionaryBatch(4, data, false)) {
        stream =
            new RawStreamWriter()
                .schema(new Schema(Collections.singletonList(strings)))
                .message(dictionary)
                .end()
                .toByteArray();
      }
    }
    IpcFormatException e = expectRefusedWithin(stream, "dictionary claim", 1 << 20);
    assertTrue(e.getMessage().contains("dictionary 4"), e.getMessage());
    assertTrue(e.getMessage().contains("offsets buffer has 8 bytes"), e.getMessage());
  }

  @Test
  void anIndexOutsideItsDictionaryIsRefused() throws IOException {
    DictionaryEncoding encoding = new DictionaryEncoding(2, false, new ArrowType.Int(32, true));
    Field strings = new Field("s", new FieldType(true, ArrowType.Utf8.INSTANCE, encoding), null);
    Field indices = new Field("s", new FieldType(true, encoding.getIndexType(), encoding), null);
    byte[] stream;
    try (VarCharVector dictionary = new VarCharVector("s", allocator);
        VectorSchemaRoot batch =
            VectorSchemaRoot.create(new Schema(Collections.singletonList(indices)), allocator)) {
      dictionary.allocateNew();
      dictionary.setSafe(0, "a".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      dictionary.setSafe(1, "b".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      dictionary.setValueCount(2);
      IntVector ints = (IntVector) batch.getVector(0);
      ints.allocateNew(3);
      ints.set(0, 1);
      ints.setNull(1);
      ints.set(2, 2);
      batch.setRowCount(3);
      stream =
          new RawStreamWriter()
              .schema(new Schema(Collections.singletonList(strings)))
              .dictionary(2, dictionary, false)
              .batch(batch)
              .end()
              .toByteArray();
    }
    IpcFormatException e = expectRefused(stream, "index 2 of 2");
    assertTrue(e.getMessage().contains("row 2 has index 2 into dictionary 2"), e.getMessage());
  }

  @Test
  void fieldsSharingADictionaryIdWithDifferentTypesAreRefused() throws IOException {
    DictionaryEncoding encoding = new DictionaryEncoding(1, false, new ArrowType.Int(32, true));
    Schema schema =
        new Schema(
            Arrays.asList(
                new Field("a", new FieldType(true, ArrowType.Utf8.INSTANCE, encoding), null),
                new Field("b", new FieldType(true, new ArrowType.Int(64, true), encoding), null)));
    byte[] stream = new RawStreamWriter().schema(schema).end().toByteArray();
    IpcFormatException e = expectRefused(stream, "shared id");
    assertTrue(e.getMessage().contains("share dictionary 1"), e.getMessage());
  }

  @Test
  void unionsAreRefusedInV4MetadataAsArrowDoesAndInV5ByName() throws IOException {
    Field union =
        new Field(
            "u",
            FieldType.nullable(new ArrowType.Union(UnionMode.Sparse, new int[] {0})),
            Collections.singletonList(Field.nullable("i", new ArrowType.Int(32, true))));
    Schema schema = new Schema(Collections.singletonList(union));
    byte[] v5 = new RawStreamWriter().schema(schema).end().toByteArray();
    assertTrue(expectRefused(v5, "v5 union").getMessage().contains("Quiver does not read"));

    ByteBuffer v4Metadata =
        MessageSerializer.serializeMetadata(schema, new IpcOption(false, MetadataVersion.V4));
    byte[] v4 = new RawStreamWriter().metadata(v4Metadata).end().toByteArray();
    IpcFormatException e = expectRefused(v4, "v4 union");
    assertTrue(e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("union"), e.getMessage());
  }

  @Test
  void aSchemaNestedDeeperThanArrowAllowsIsRefusedBeforeArrowRecursesIntoIt() throws IOException {
    Field nested = INTS;
    for (int depth = 0; depth < IpcStreamReader.MAX_NESTING_DEPTH; depth++) {
      nested =
          new Field(
              "s" + depth,
              FieldType.nullable(ArrowType.Struct.INSTANCE),
              Collections.singletonList(nested));
    }
    byte[] stream =
        new RawStreamWriter()
            .schema(new Schema(Collections.singletonList(nested)))
            .end()
            .toByteArray();
    IpcFormatException e = expectRefused(stream, "deep schema");
    assertTrue(e.getMessage().contains("deeper than 64 levels"), e.getMessage());
  }

  @Test
  void viewTypesAreRefusedByName() throws IOException {
    // Built by hand: Arrow 11 and 12 (Spark 3.x) have no view types to build it with.
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int name = builder.createString("v");
    org.apache.arrow.flatbuf.Utf8.startUtf8(builder);
    int type = org.apache.arrow.flatbuf.Utf8.endUtf8(builder);
    int children = org.apache.arrow.flatbuf.Field.createChildrenVector(builder, new int[0]);
    org.apache.arrow.flatbuf.Field.startField(builder);
    org.apache.arrow.flatbuf.Field.addName(builder, name);
    org.apache.arrow.flatbuf.Field.addNullable(builder, true);
    org.apache.arrow.flatbuf.Field.addTypeType(builder, (byte) 24); // Type.Utf8View
    org.apache.arrow.flatbuf.Field.addType(builder, type);
    org.apache.arrow.flatbuf.Field.addChildren(builder, children);
    int field = org.apache.arrow.flatbuf.Field.endField(builder);
    byte[] stream =
        new RawStreamWriter()
            .metadata(schemaMessage(builder, field, Endianness.Little))
            .end()
            .toByteArray();
    IpcFormatException e = expectRefused(stream, "view type");
    // Arrow 18 parses the type and Quiver names it; Arrow 11 cannot parse it at all.
    assertTrue(
        e.getMessage().contains("Utf8View, which Quiver does not read")
            || e.getMessage().contains("the schema does not parse"),
        e.getMessage());
    assertNotNull(Type.Utf8); // the enum this test's byte 24 extends
  }

  @Test
  void bodyCompressionIsRefusedByName() throws IOException {
    byte[] stream;
    try (ArrowBuf data = allocator.buffer(4)) {
      data.setInt(0, 5);
      data.writerIndex(4);
      try (ArrowRecordBatch batch =
          new ArrowRecordBatch(
              1,
              Collections.singletonList(new ArrowFieldNode(1, 0)),
              Arrays.asList(allocator.getEmpty(), data),
              new ArrowBodyCompression(
                  org.apache.arrow.flatbuf.CompressionType.LZ4_FRAME,
                  org.apache.arrow.flatbuf.BodyCompressionMethod.BUFFER))) {
        stream =
            new RawStreamWriter()
                .schema(new Schema(Collections.singletonList(INTS)))
                .message(batch)
                .end()
                .toByteArray();
      }
    }
    assertTrue(expectRefused(stream, "compressed body").getMessage().contains("body compression"));
  }

  @Test
  void garbageMetadataIsQuiversErrorWithArrowsCause() throws IOException {
    byte[] schema = new RawStreamWriter().schema(new Schema(List.of(INTS))).toByteArray();
    byte[] garbage = new byte[64];
    Arrays.fill(garbage, (byte) 0x7f);
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    prefix.putInt(-1).putInt(garbage.length);
    byte[] stream =
        new RawStreamWriter()
            .bytes(schema)
            .bytes(prefix.array())
            .bytes(garbage)
            .end()
            .toByteArray();
    IpcFormatException e = expectRefused(stream, "garbage metadata");
    assertTrue(e.getMessage().contains("message 1 at byte " + schema.length), e.getMessage());
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    assertTrue(root instanceof RuntimeException, "the original is kept: " + root);
  }

  /** Like {@link #expectRefused}, with the decode's peak allocation under {@code bound} bytes. */
  private IpcFormatException expectRefusedWithin(byte[] stream, String source, long bound) {
    try (BufferAllocator probe = allocator.newChildAllocator("probe", 0, Long.MAX_VALUE)) {
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class,
              () -> ArrowIpc.decode(stream, StreamCodec.NONE, probe, source));
      assertTrue(e.getMessage().contains(source), e.getMessage());
      assertTrue(
          probe.getPeakMemoryAllocation() < bound, "peak " + probe.getPeakMemoryAllocation());
      return e;
    }
  }

  private IpcFormatException expectRefused(byte[] stream, String source) {
    IpcFormatException e =
        assertThrows(
            IpcFormatException.class,
            () -> ArrowIpc.decode(stream, StreamCodec.NONE, allocator, source));
    assertTrue(e.getMessage().contains(source), e.getMessage());
    assertEquals(0, allocator.getAllocatedMemory(), source);
    return e;
  }

  /** A one-column int32 stream whose schema states {@code endianness}, values written that way. */
  private byte[] intStream(int[] values, short endianness) throws IOException {
    return intStream(
        values,
        endianness,
        endianness == Endianness.Big ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
  }

  /** The same, with the values written in {@code order} whatever the schema states. */
  private byte[] intStream(int[] values, short endianness, ByteOrder order) throws IOException {
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int field = INTS.getField(builder);
    ByteBuffer schema = schemaMessage(builder, field, endianness);
    try (ArrowBuf data = allocator.buffer(4L * values.length)) {
      ByteBuffer bytes = data.nioBuffer(0, 4 * values.length).order(order);
      for (int v : values) {
        bytes.putInt(v);
      }
      data.writerIndex(4L * values.length);
      // Written as the big-endian machine would: the same bytes, read as little-endian ints.
      try (ArrowRecordBatch batch =
          new ArrowRecordBatch(
              values.length,
              Collections.singletonList(new ArrowFieldNode(values.length, 0)),
              Arrays.asList(allocator.getEmpty(), data))) {
        return new RawStreamWriter().metadata(schema).message(batch).end().toByteArray();
      }
    }
  }

  private static ByteBuffer schemaMessage(FlatBufferBuilder builder, int field, short endianness) {
    int fields = org.apache.arrow.flatbuf.Schema.createFieldsVector(builder, new int[] {field});
    org.apache.arrow.flatbuf.Schema.startSchema(builder);
    org.apache.arrow.flatbuf.Schema.addEndianness(builder, endianness);
    org.apache.arrow.flatbuf.Schema.addFields(builder, fields);
    int schema = org.apache.arrow.flatbuf.Schema.endSchema(builder);
    return MessageSerializer.serializeMessage(
        builder, MessageHeader.Schema, schema, 0, new IpcOption());
  }

  private static byte[] filled(int length) {
    byte[] ones = new byte[length];
    Arrays.fill(ones, (byte) 0xff);
    return ones;
  }

  private static byte[] prefix(int metadataLength) {
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    prefix.putInt(-1).putInt(metadataLength);
    return prefix.array();
  }

  private static long allocatedBytesOfThisThread() {
    return ((com.sun.management.ThreadMXBean)
            java.lang.management.ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }
}
