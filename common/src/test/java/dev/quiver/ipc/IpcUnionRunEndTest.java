package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.arrowStream;
import static dev.quiver.ipc.IpcTestSupport.bodyCompressedStream;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static dev.quiver.testing.EncodedColumns.DENSE;
import static dev.quiver.testing.EncodedColumns.DENSE_INT;
import static dev.quiver.testing.EncodedColumns.SPARSE;
import static dev.quiver.testing.EncodedColumns.fillRuns;
import static dev.quiver.testing.EncodedColumns.fillUnions;
import static dev.quiver.testing.EncodedColumns.runEndEncoded;
import static dev.quiver.testing.EncodedColumns.runEndEncodedType;
import static dev.quiver.testing.EncodedColumns.runEndEncodingKnown;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.flatbuffers.FlatBufferBuilder;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.EncodedColumns;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unions (sparse and dense) and run-end encoded columns: streams Arrow Java writes read to the
 * values Arrow Java's own reader gives; type ids the union does not declare, dense offsets outside
 * their child, run ends that do not ascend or do not cover the column are refused before the batch
 * is loaded, with nothing left allocated. Run-end encoding exists from Arrow 14 on: on Spark 3.x's
 * Arrow (11, 12) its tests are skipped, and its schema does not parse.
 */
class IpcUnionRunEndTest extends AllocatorTestBase {

  @Test
  void unionsReadAsArrowsOwnReaderReadsThem() throws IOException {
    byte[] stream = write(new Schema(List.of(SPARSE, DENSE)), EncodedColumns::fillUnions);
    List<List<String>> rows = assertSameAsArrow(stream, "unions");
    assertEquals(List.of("42 | 7 | ", "x | yy | ", "null | 8 | ", "null | null | "), rows.get(0));
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#arrowBodyCodecs")
  void bodyCompressedUnionsAndRunsReadAsArrowReadsThem(CompressionUtil.CodecType codec)
      throws IOException {
    byte[] stream;
    try (VectorSchemaRoot root = EncodedColumns.unionsAndRuns(allocator)) {
      stream = bodyCompressedStream(allocator, codec, null, root);
    }
    assertSameAsArrow(stream, "compressed " + codec);
  }

  @Test
  void aSparseTypeIdTheUnionDoesNotDeclareIsRefused() throws IOException {
    for (int undeclared : new int[] {6, -1, 127}) {
      byte[] stream =
          unionsChanged(SPARSE, root -> unionTypeIds(root.getVector("u")).accept(undeclared));
      assertRefused(
          stream,
          "undeclared " + undeclared,
          "record batch 0",
          "column u: row 1 has type id " + undeclared + ", which the union does not declare");
    }
  }

  @Test
  void aDenseTypeIdTheUnionDoesNotDeclareIsRefused() throws IOException {
    byte[] stream =
        unionsChanged(DENSE, root -> unionTypeIds(root.getVector("d")).accept(DENSE_INT + 1));
    assertRefused(stream, "dense undeclared", "row 1 has type id 4");
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 1000, -1})
  void aDenseOffsetOutsideItsChildIsRefused(int offset) throws IOException {
    byte[] stream =
        unionsChanged(
            DENSE,
            root -> {
              // Row 2 selects the ints, of which there are 2.
              root.getVector("d").getOffsetBuffer().setInt(2 * 4, offset);
            });
    assertRefused(
        stream, "dense offset " + offset, "column d: row 2 has offset " + offset + " into child i");
  }

  @Test
  void denseOffsetsThatDescendWithinAChildAreRefused() throws IOException {
    byte[] stream =
        unionsChanged(
            DENSE,
            root -> {
              // Rows 0 and 2 both select the ints: 1, then 0.
              root.getVector("d").getOffsetBuffer().setInt(0, 1);
              root.getVector("d").getOffsetBuffer().setInt(2 * 4, 0);
            });
    assertRefused(stream, "dense descending", "row 2 has offset 0", "below the 1 before it");
  }

  @Test
  void aSparseChildShorterThanItsUnionIsRefused() throws IOException {
    byte[] stream =
        writeWithNode(
            new Schema(List.of(SPARSE)), EncodedColumns::fillUnions, 2, new ArrowFieldNode(2, 0));
    assertRefused(stream, "short sparse child", "column s has 2 values", "sparse union u needs 4");
  }

  @Test
  void unionsDeclaringRepeatedOrOutOfRangeTypeIdsAreRefusedWithTheSchema() throws IOException {
    for (int[] typeIds : new int[][] {{1, 1}, {0, 128}, {-1, 2}, {0}}) {
      Field union =
          new Field(
              "u",
              FieldType.nullable(new ArrowType.Union(UnionMode.Sparse, typeIds)),
              SPARSE.getChildren());
      byte[] stream = new RawStreamWriter().schema(new Schema(List.of(union))).end().toByteArray();
      assertRefused(stream, "type ids " + java.util.Arrays.toString(typeIds), "union column u");
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {16, 32, 64})
  void runEndEncodedColumnsReadAsArrowsOwnReaderReadsThem(int runEndBits) throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    Schema schema =
        new Schema(
            List.of(runEndEncoded(new ArrowType.Int(runEndBits, true)), Field.nullable("n", INT)));
    byte[] stream =
        write(
            schema,
            root -> {
              fillRuns(root.getVector("r"), 6, new int[] {2, 3, 6}, "a", null, "ccc");
              fillInts(root.getVector("n"), 1, 2, 3, 4, 5, 6);
            });
    List<List<String>> rows = assertSameAsArrow(stream, "runs " + runEndBits);
    assertEquals(
        List.of("a | 1 | ", "a | 2 | ", "null | 3 | ", "ccc | 4 | ", "ccc | 5 | ", "ccc | 6 | "),
        rows.get(0));
  }

  @Test
  void runEndsThatDoNotAscendFromOneAreRefused() throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    assertRunsRefused(new int[] {2, 2, 6}, 6, "run end 1 is 2, not above 2");
    assertRunsRefused(new int[] {4, 3, 6}, 6, "run end 1 is 3, not above 4");
    assertRunsRefused(new int[] {0, 3, 6}, 6, "run end 0 is 0, not above 0");
    assertRunsRefused(new int[] {-5, 3, 6}, 6, "run end 0 is -5, not above 0");
  }

  @Test
  void runsEndingBeforeOrPastTheColumnsEndAreRefused() throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    assertRunsRefused(new int[] {2, 3, 5}, 6, "its last run ends at 5, before its 6 values end");
    // The format allows it for a slice of a longer column; Arrow Java's validation does not.
    assertRunsRefused(
        new int[] {2, 3, 9}, 6, "its last run ends at 9, past where its 6 values end");
  }

  @Test
  void runEndsThatCannotReachTheColumnsLengthAreRefused() throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    int rows = 40_000;
    byte[] stream =
        write(
            new Schema(List.of(runEndEncoded(new ArrowType.Int(16, true)))),
            root -> fillRuns(root.getVector("r"), rows, new int[] {rows}, "a"));
    // 40,000 as a 16-bit run end reads -25,536.
    assertRefused(stream, "short run ends", "run end 0 is -25536");
  }

  @Test
  void runEndEncodedNodesThatDisagreeAreRefused() throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    Schema schema = new Schema(List.of(runEndEncoded(INT)));
    Consumer<VectorSchemaRoot> fill =
        root -> fillRuns(root.getVector("r"), 6, new int[] {2, 3, 6}, "a", null, "c");
    // Node 0 the column, node 1 its run ends, node 2 its values.
    assertRefused(
        writeWithNode(schema, fill, 0, new ArrowFieldNode(6, 1)),
        "column nulls",
        "run-end encoded column r claims 1 nulls");
    assertRefused(
        writeWithNode(schema, fill, 1, new ArrowFieldNode(3, 1)),
        "run end nulls",
        "its run ends have 1 nulls");
    assertRefused(
        writeWithNode(schema, fill, 2, new ArrowFieldNode(2, 0)),
        "fewer values",
        "column r has 3 run ends and 2 values");
  }

  @Test
  void runEndEncodingWithRunEndsThatAreNotSmallIntegersIsRefusedWithTheSchema() throws IOException {
    assumeTrue(runEndEncodingKnown(), "this Arrow Java has no run-end encoding");
    for (ArrowType runEnds :
        new ArrowType[] {
          new ArrowType.Int(8, true), new ArrowType.Int(32, false), ArrowType.Utf8.INSTANCE
        }) {
      Field field =
          new Field(
              "r",
              FieldType.notNullable(runEndEncodedType()),
              List.of(Field.notNullable("run_ends", runEnds), Field.nullable("values", INT)));
      byte[] stream = new RawStreamWriter().schema(new Schema(List.of(field))).end().toByteArray();
      assertRefused(stream, "run ends " + runEnds, "run-end encoded column r must have two");
    }
  }

  /**
   * A run-end encoded field built by hand (type 22 of the format's {@code Type}): read from Arrow
   * 14 on; on Arrow 11 and 12, which do not know it, refused because the schema does not parse.
   */
  @Test
  void runEndEncodingIsRefusedByArrowThatDoesNotKnowIt() throws IOException {
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int runEnds = Field.notNullable("run_ends", INT).getField(builder);
    int values = Field.nullable("values", INT).getField(builder);
    int name = builder.createString("r");
    // RunEndEncoded is an empty table, as Null is.
    org.apache.arrow.flatbuf.Null.startNull(builder);
    int type = org.apache.arrow.flatbuf.Null.endNull(builder);
    int children =
        org.apache.arrow.flatbuf.Field.createChildrenVector(builder, new int[] {runEnds, values});
    org.apache.arrow.flatbuf.Field.startField(builder);
    org.apache.arrow.flatbuf.Field.addName(builder, name);
    org.apache.arrow.flatbuf.Field.addTypeType(builder, (byte) 22);
    org.apache.arrow.flatbuf.Field.addType(builder, type);
    org.apache.arrow.flatbuf.Field.addChildren(builder, children);
    int field = org.apache.arrow.flatbuf.Field.endField(builder);
    int fields = org.apache.arrow.flatbuf.Schema.createFieldsVector(builder, new int[] {field});
    org.apache.arrow.flatbuf.Schema.startSchema(builder);
    org.apache.arrow.flatbuf.Schema.addEndianness(builder, Endianness.Little);
    org.apache.arrow.flatbuf.Schema.addFields(builder, fields);
    int schema = org.apache.arrow.flatbuf.Schema.endSchema(builder);
    byte[] stream =
        new RawStreamWriter()
            .metadata(
                MessageSerializer.serializeMessage(
                    builder, MessageHeader.Schema, schema, 0, new IpcOption()))
            .end()
            .toByteArray();
    if (runEndEncodingKnown()) {
      try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "ree")) {
        assertEquals("RunEndEncoded", decoded.schema().getFields().get(0).getType().toString());
      }
    } else {
      assertRefused(stream, "ree on old Arrow", "the schema does not parse");
    }
  }

  private static final ArrowType INT = new ArrowType.Int(32, true);

  private static void fillInts(FieldVector vector, int... values) {
    IntVector ints = (IntVector) vector;
    ints.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      ints.set(i, values[i]);
    }
    ints.setValueCount(values.length);
  }

  /** Sets row 1's type id of the union {@code vector}. */
  private static Consumer<Integer> unionTypeIds(FieldVector vector) {
    return typeId ->
        (vector instanceof UnionVector
                ? ((UnionVector) vector).getTypeBuffer()
                : ((DenseUnionVector) vector).getTypeBuffer())
            .setByte(1, typeId);
  }

  /**
   * One batch of {@code schema}, filled by {@code fill}, as Arrow Java's stream writer writes it.
   */
  private byte[] write(Schema schema, Consumer<VectorSchemaRoot> fill) throws IOException {
    return arrowStream(allocator, schema, fill);
  }

  /** One batch of {@code union} holding {@link EncodedColumns#fillUnions}'s rows, then changed. */
  private byte[] unionsChanged(Field union, Consumer<VectorSchemaRoot> change) throws IOException {
    return write(
        new Schema(List.of(union)),
        root -> {
          fillUnions(root);
          change.accept(root);
        });
  }

  /** The same batch with field node {@code index} replaced by {@code node}. */
  private byte[] writeWithNode(
      Schema schema, Consumer<VectorSchemaRoot> fill, int index, ArrowFieldNode node)
      throws IOException {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      fill.accept(root);
      root.setRowCount(root.getVector(0).getValueCount());
      try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
        List<ArrowFieldNode> nodes = new ArrayList<>(batch.getNodes());
        nodes.set(index, node);
        try (ArrowRecordBatch changed =
            new ArrowRecordBatch(batch.getLength(), nodes, batch.getBuffers())) {
          return new RawStreamWriter().schema(schema).message(changed).end().toByteArray();
        }
      }
    }
  }

  private void assertRunsRefused(int[] runEnds, int length, String says) throws IOException {
    String[] values = new String[runEnds.length];
    java.util.Arrays.fill(values, "v");
    byte[] stream =
        write(
            new Schema(List.of(runEndEncoded(INT))),
            root -> fillRuns(root.getVector("r"), length, runEnds, values));
    assertRefused(stream, "runs " + java.util.Arrays.toString(runEnds), "column r: " + says);
  }

  private List<List<String>> assertSameAsArrow(byte[] stream, String source) throws IOException {
    return IpcTestSupport.assertSameAsArrow(stream, allocator, source);
  }

  private IpcFormatException assertRefused(byte[] stream, String source, String... says) {
    return IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }
}
