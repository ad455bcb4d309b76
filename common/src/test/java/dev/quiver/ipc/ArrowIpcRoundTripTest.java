package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static dev.quiver.ipc.IpcTestSupport.batchRows;
import static dev.quiver.ipc.IpcTestSupport.encodeBatches;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.io.PiecewiseReads;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.TestData;
import dev.quiver.testing.TrickleInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ArrowIpcRoundTripTest extends AllocatorTestBase {

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void everyTypeRoundTripsRowByRowWithNulls(StreamCodec codec) throws IOException {
    try (VectorSchemaRoot original = TestData.allTypes(allocator, 300, 42)) {
      byte[] bytes = ArrowIpc.encode(original, null, codec);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "all types")) {
        assertEquals(TestData.allTypesSchema(), decoded.schema());
        assertEquals(1, decoded.batches().size());
        assertEquals(300, decoded.rowCount());
        assertFalse(decoded.hasDictionaries());
        try (VectorSchemaRoot back = load(decoded, 0)) {
          assertEquals(rows(original), rows(back));
          for (FieldVector vector : original.getFieldVectors()) {
            String name = vector.getField().getName();
            assertEquals(
                vector.getNullCount(), back.getVector(name).getNullCount(), name + " null count");
          }
          // Row 0 is null in every column (TestData.NULL_EVERY), and nulls must come back as such.
          for (FieldVector vector : back.getFieldVectors()) {
            assertNull(vector.getObject(0), vector.getField().getName());
          }
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void columnsOfNothingButNullsRoundTrip(StreamCodec codec) throws IOException {
    try (VectorSchemaRoot allNull = VectorSchemaRoot.create(TestData.allTypesSchema(), allocator)) {
      // Freshly allocated validity buffers are zero: every row of every column is null.
      allNull.allocateNew();
      allNull.setRowCount(257);
      byte[] bytes = ArrowIpc.encode(allNull, null, codec);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "all null");
          VectorSchemaRoot back = load(decoded, 0)) {
        assertEquals(257, back.getRowCount());
        for (FieldVector vector : back.getFieldVectors()) {
          assertEquals(257, vector.getNullCount(), vector.getField().getName());
        }
        assertEquals(rows(allNull), rows(back));
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void deeplyNestedDataWithNullsAtEveryLevelRoundTrips(StreamCodec codec) throws IOException {
    try (VectorSchemaRoot original = nested(500)) {
      byte[] bytes = ArrowIpc.encode(original, null, codec);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "nested");
          VectorSchemaRoot back = load(decoded, 0)) {
        assertEquals(original.getSchema(), back.getSchema());
        assertEquals(rows(original), rows(back));
        assertTrue(back.getVector("outer").getNullCount() > 0);
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void severalBatchesComeBackInOrder(StreamCodec codec) throws IOException {
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try {
      roots.add(TestData.allTypes(allocator, 100, 1));
      roots.add(TestData.allTypes(allocator, 0, 2));
      roots.add(TestData.allTypes(allocator, 7, 3));
      roots.add(TestData.allTypes(allocator, 1000, 4));
      byte[] bytes = encodeBatches(TestData.allTypesSchema(), roots, null, codec, allocator);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "several")) {
        assertEquals(4, decoded.batches().size());
        assertEquals(1107, decoded.rowCount());
        List<List<String>> expected = new ArrayList<>();
        for (VectorSchemaRoot root : roots) {
          expected.add(rows(root));
        }
        assertEquals(expected, batchRows(decoded, allocator));
      }
    } finally {
      roots.forEach(VectorSchemaRoot::close);
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void zeroColumnBatchKeepsItsRowCount(StreamCodec codec) throws IOException {
    Schema noFields = new Schema(Collections.emptyList());
    try (ArrowRecordBatch batch =
        new ArrowRecordBatch(12345, Collections.emptyList(), Collections.emptyList())) {
      byte[] bytes =
          ArrowIpc.encode(noFields, Collections.singletonList(batch), null, codec, allocator);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "zero columns")) {
        assertEquals(noFields, decoded.schema());
        assertEquals(1, decoded.batches().size());
        assertEquals(12345, decoded.batches().get(0).getLength());
        assertEquals(12345, decoded.rowCount());
        try (VectorSchemaRoot back = load(decoded, 0)) {
          assertEquals(12345, back.getRowCount());
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void schemaOnlyStreamDecodesToZeroBatches(StreamCodec codec) throws IOException {
    byte[] bytes =
        ArrowIpc.encode(TestData.allTypesSchema(), Collections.emptyList(), null, codec, allocator);
    try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "schema only")) {
      assertEquals(TestData.allTypesSchema(), decoded.schema());
      assertTrue(decoded.batches().isEmpty());
      assertEquals(0, decoded.rowCount());
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void streamOfManyPiecesDecodesThroughThePiecewiseReads(StreamCodec codec) throws IOException {
    // Seed 42: TestData.allTypes fails on some seeds past a few hundred rows (see the report).
    try (VectorSchemaRoot original = TestData.allTypes(allocator, 4000, 42)) {
      byte[] uncompressed = ArrowIpc.encode(original, null, StreamCodec.NONE);
      assertTrue(
          uncompressed.length > 4 * PiecewiseReads.PIECE_SIZE,
          "the stream must span several 64 KiB reads, is " + uncompressed.length);
      List<String> expected = rows(original);
      byte[] bytes = ArrowIpc.encode(original, null, codec);
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "large")) {
        assertEquals(Collections.singletonList(expected), batchRows(decoded, allocator));
      }
      // A source that hands out a few bytes per read must give the same answer.
      InputStream trickle = new TrickleInputStream(new ByteArrayInputStream(bytes), 997);
      try (DecodedStream decoded = ArrowIpc.decode(trickle, codec, allocator, "trickle")) {
        assertEquals(expected, allRows(decoded, allocator));
      }
    }
  }

  @Test
  void decodedBuffersBelongToTheGivenAllocator() throws IOException {
    try (VectorSchemaRoot original = TestData.allTypes(allocator, 50, 5)) {
      byte[] bytes = ArrowIpc.encode(original, null, SparkStreamCodec.LZ4);
      try (BufferAllocator child = allocator.newChildAllocator("decode", 0, Long.MAX_VALUE)) {
        DecodedStream decoded = ArrowIpc.decode(bytes, SparkStreamCodec.LZ4, child, "owned");
        assertTrue(child.getAllocatedMemory() > 0);
        assertTrue(decoded.batchBytes() > 0);
        decoded.close();
        assertEquals(0, child.getAllocatedMemory());
      }
    }
  }

  private VectorSchemaRoot load(DecodedStream decoded, int batch) {
    VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator);
    new VectorLoader(root).load(decoded.batches().get(batch));
    return root;
  }

  /**
   * {@code outer: list<struct<a: int, tags: list<string>>>} with nulls in the outer list, in its
   * structs, in {@code a}, in {@code tags} and in the tag strings.
   */
  private VectorSchemaRoot nested(int rows) {
    Field tag = new Field("tag", FieldType.nullable(ArrowType.Utf8.INSTANCE), null);
    Field tags = new Field("tags", FieldType.nullable(ArrowType.List.INSTANCE), list(tag));
    Field a = new Field("a", FieldType.nullable(new ArrowType.Int(32, true)), null);
    Field element =
        new Field("element", FieldType.nullable(ArrowType.Struct.INSTANCE), Arrays.asList(a, tags));
    Field outer = new Field("outer", FieldType.nullable(ArrowType.List.INSTANCE), list(element));
    VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(list(outer)), allocator);
    root.allocateNew();
    ListVector outerVector = (ListVector) root.getVector("outer");
    StructVector structs = (StructVector) outerVector.getDataVector();
    IntVector as = (IntVector) structs.getChild("a");
    ListVector tagLists = (ListVector) structs.getChild("tags");
    VarCharVector tagValues = (VarCharVector) tagLists.getDataVector();
    int tagIndex = 0;
    for (int r = 0; r < rows; r++) {
      if (r % 5 == 0) {
        outerVector.setNull(r);
        continue;
      }
      int first = outerVector.startNewValue(r);
      int count = r % 4;
      for (int i = 0; i < count; i++) {
        int s = first + i;
        if ((r + i) % 3 == 0) {
          structs.setNull(s);
          as.setNull(s);
          tagLists.setNull(s);
          continue;
        }
        structs.setIndexDefined(s);
        if (i == 1) {
          as.setNull(s);
        } else {
          as.setSafe(s, r * 10 + i);
        }
        if (i == 2) {
          tagLists.setNull(s);
          continue;
        }
        int firstTag = tagLists.startNewValue(s);
        int tagCount = (r + i) % 3;
        for (int t = 0; t < tagCount; t++) {
          if (t == 1) {
            tagValues.setNull(firstTag + t);
          } else {
            tagValues.setSafe(firstTag + t, ("t" + tagIndex++).getBytes(StandardCharsets.UTF_8));
          }
        }
        tagLists.endValue(s, tagCount);
      }
      outerVector.endValue(r, count);
    }
    root.setRowCount(rows);
    return root;
  }

  private static List<Field> list(Field field) {
    return Collections.singletonList(field);
  }
}
