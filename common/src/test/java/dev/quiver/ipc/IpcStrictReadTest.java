package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.flatbuffers.FlatBufferBuilder;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
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
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.MetadataVersion;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the strict reader refuses that Arrow's own reader accepts, crashes on, or reads wrongly:
 * byte order (converted rather than read swapped), hostile lengths (before any allocation),
 * unchecked dictionary batches, unsupported types, trailing bytes, unknown body compression,
 * indices outside their dictionary.
 */
class IpcStrictReadTest extends AllocatorTestBase {

  private static final Field INTS = Field.nullable("n", new ArrowType.Int(32, true));

  @Test
  void bigEndianStreamIsConvertedWhileTheSameBytesFlaggedLittleReadSwapped() throws IOException {
    int[] values = {1, 2, 0x01020304};
    byte[] bigEndian = intStream(values, Endianness.Big);
    try (DecodedStream converted =
        ArrowIpc.decode(bigEndian, StreamCodec.NONE, allocator, "big-endian stream")) {
      assertEquals(List.of("1 | ", "2 | ", "16909060 | "), allRows(converted, allocator));
    }

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
      assertRefusedWithin(1, stream, "length " + length, "bytes of metadata");
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
    assertRefused(trailing, "trailing", "follow the end-of-stream");
    byte[] twoStreams = Arrays.copyOf(plain, plain.length * 2);
    System.arraycopy(plain, 0, twoStreams, plain.length, plain.length);
    byte[] compressed = Codecs.compress(SparkStreamCodec.ZSTD, twoStreams);
    IpcTestSupport.assertRefused(
        compressed, SparkStreamCodec.ZSTD, allocator, "two streams", "follow the end-of-stream");
  }

  @Test
  void aStreamWithoutItsEndOfStreamMarkerIsTruncation() throws IOException {
    byte[] plain = intStream(new int[] {7}, Endianness.Little);
    byte[] noMarker = Arrays.copyOf(plain, plain.length - 8);
    assertRefused(noMarker, "no marker", "end-of-stream marker");
  }

  @Test
  void aColumnLongerThanItsBuffersIsRefusedBeforeLoading() throws IOException {
    int rows = 1 << 26;
    byte[] stream =
        new HostileBatch(allocator, INTS, rows).node(rows, 0).emptyBuffer().intBuffer(5).stream();
    assertRefusedWithin(1 << 20, stream, "long column", "data buffer has", "record batch 0");
  }

  @Test
  void validityBitmapsTheLoaderWouldMakeAreBoundedByTheBody() throws IOException {
    int rows = Integer.MAX_VALUE;
    Field nulls =
        new Field(
            "s",
            FieldType.nullable(ArrowType.Struct.INSTANCE),
            Collections.singletonList(Field.nullable("z", ArrowType.Null.INSTANCE)));
    byte[] stream =
        new HostileBatch(allocator, nulls, rows)
            .node(rows, 0).node(rows, rows).emptyBuffer().stream();
    assertRefused(stream, "struct of nulls", "validity bitmaps");
  }

  @Test
  void aChildShorterThanItsParentIsRefusedBeforeLoading() throws IOException {
    int rows = 1 << 22;
    Field struct =
        new Field(
            "s", FieldType.nullable(ArrowType.Struct.INSTANCE), Collections.singletonList(INTS));
    byte[] stream =
        new HostileBatch(allocator, struct, rows)
            .node(rows, 0).node(1, 0).filledBuffer(rows / 8).emptyBuffer().intBuffer(5).stream();
    // The body (half a MiB of bitmap, rounded up) and not the 16 MiB the child would grow to.
    assertRefusedWithin(2 << 20, stream, "short child", "its parent s needs " + rows);
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
    assertRefused(
        stream,
        "descending offset",
        String.format("column s: offset %d is %d, below %d", index, lowered, previous));
  }

  /** The unchecked reads start only once the buffer is known to hold every offset. */
  @Test
  void offsetsAreReadOnlyFromABufferThatHoldsThemAll() {
    try (ArrowBuf offsets = allocator.buffer(8)) {
      offsets.setZero(0, 8);
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class, () -> LoadedBatchChecks.checkAscending("s", offsets, 3, 4));
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
    byte[] stream =
        new HostileBatch(allocator, strings, values)
                .asDictionary(4)
                .node(values, 0)
                .emptyBuffer()
                .buffer(new byte[8])
                .emptyBuffer()
                .stream();
    assertRefusedWithin(
        1 << 20, stream, "dictionary claim", "dictionary 4", "offsets buffer has 8 bytes");
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
    assertRefused(stream, "index 2 of 2", "row 2 has index 2 into dictionary 2");
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
    assertRefused(stream, "shared id", "share dictionary 1");
  }

  @Test
  void unionsAreRefusedInV4MetadataAsArrowDoes() throws IOException {
    Field union =
        new Field(
            "u",
            FieldType.nullable(new ArrowType.Union(UnionMode.Sparse, new int[] {0})),
            Collections.singletonList(Field.nullable("i", new ArrowType.Int(32, true))));
    Schema schema = new Schema(Collections.singletonList(union));
    // V5 unions are read (IpcUnionRunEndTest); in V4 they had a validity bitmap.
    ByteBuffer v4Metadata =
        MessageSerializer.serializeMetadata(schema, new IpcOption(false, MetadataVersion.V4));
    byte[] v4 = new RawStreamWriter().metadata(v4Metadata).end().toByteArray();
    IpcFormatException e = assertRefused(v4, "v4 union");
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
    assertRefused(stream, "deep schema", "deeper than 64 levels");
  }

  @Test
  void aUnionClaimingMoreTypeIdsThanItsMetadataHoldsIsRefusedBeforeArrowAllocatesThem()
      throws IOException {
    // A fuzzer's finding: Arrow makes an int[] of the claimed count before reading one.
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int name = builder.createString("u");
    int typeIds =
        org.apache.arrow.flatbuf.Union.createTypeIdsVector(builder, new int[] {0x5A5A5A5A});
    org.apache.arrow.flatbuf.Union.startUnion(builder);
    org.apache.arrow.flatbuf.Union.addTypeIds(builder, typeIds);
    int type = org.apache.arrow.flatbuf.Union.endUnion(builder);
    int children = org.apache.arrow.flatbuf.Field.createChildrenVector(builder, new int[0]);
    org.apache.arrow.flatbuf.Field.startField(builder);
    org.apache.arrow.flatbuf.Field.addName(builder, name);
    org.apache.arrow.flatbuf.Field.addNullable(builder, true);
    org.apache.arrow.flatbuf.Field.addTypeType(builder, Type.Union);
    org.apache.arrow.flatbuf.Field.addType(builder, type);
    org.apache.arrow.flatbuf.Field.addChildren(builder, children);
    int field = org.apache.arrow.flatbuf.Field.endField(builder);
    ByteBuffer message = schemaMessage(builder, field, Endianness.Little);
    byte[] metadata = new byte[message.remaining()];
    message.duplicate().get(metadata);
    // The vector's length is the int before its one element: claim 2^28 of them (1 GiB).
    ByteBuffer patched = ByteBuffer.wrap(metadata).order(ByteOrder.LITTLE_ENDIAN);
    int element = -1;
    for (int i = 4; i + 4 <= metadata.length; i += 4) {
      if (patched.getInt(i) == 0x5A5A5A5A) {
        element = i;
      }
    }
    assertTrue(element > 0, "the type id is in the metadata");
    patched.putInt(element - 4, 1 << 28);
    byte[] stream = new RawStreamWriter().metadata(patched).end().toByteArray();
    assertRefused(stream, "union type ids", "a union field claims 268435456 type ids");
  }

  @Test
  void viewTypesAreReadWhereArrowKnowsThemAndRefusedWhereItDoesNot() throws IOException {
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
    if (dev.quiver.testing.EncodedColumns.viewTypesKnown()) {
      // Arrow 18 on reads it (IpcViewTypesTest).
      try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "view")) {
        assertEquals("Utf8View", decoded.schema().getFields().get(0).getType().toString());
      }
    } else {
      assertRefused(stream, "view type", "the schema does not parse");
    }
    assertNotNull(Type.Utf8); // the enum this test's byte 24 extends
  }

  @Test
  void bodyCompressionOfAnUnknownCodecOrMethodIsRefusedByName() throws IOException {
    byte[] codec =
        new HostileBatch(allocator, INTS, 1)
            .node(1, 0).emptyBuffer().intBuffer(5).flaggedCompressed((byte) 7, (byte) 0).stream();
    assertRefused(codec, "unknown codec", "body compression codec 7");
    byte[] method =
        new HostileBatch(allocator, INTS, 1)
            .node(1, 0).emptyBuffer().intBuffer(5).flaggedCompressed((byte) 0, (byte) 3).stream();
    assertRefused(method, "unknown method", "body compression method 3");
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
    IpcFormatException e =
        assertRefused(stream, "garbage metadata", "message 1 at byte " + schema.length);
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    assertTrue(root instanceof RuntimeException, "the original is kept: " + root);
  }

  /** The refusal of an uncompressed {@code stream}: {@link IpcTestSupport#assertRefused}. */
  private IpcFormatException assertRefused(byte[] stream, String source, String... says) {
    return IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }

  /** The same, the decode's peak allocation under {@code peakBound} bytes. */
  private IpcFormatException assertRefusedWithin(
      long peakBound, byte[] stream, String source, String... says) {
    return IpcTestSupport.assertRefusedWithin(
        peakBound, stream, StreamCodec.NONE, allocator, source, says);
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
    ByteBuffer data = ByteBuffer.allocate(4 * values.length).order(order);
    for (int v : values) {
      data.putInt(v);
    }
    // Written as the big-endian machine would: the same bytes, read as little-endian ints.
    return new HostileBatch(allocator, INTS, values.length)
            .schemaMessage(schemaMessage(builder, field, endianness))
            .node(values.length, 0)
            .emptyBuffer()
            .buffer(data.array())
            .stream();
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
