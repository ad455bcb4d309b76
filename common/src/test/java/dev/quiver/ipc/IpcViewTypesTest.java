package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.bodyCompressedStream;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static dev.quiver.testing.EncodedColumns.setListView;
import static dev.quiver.testing.EncodedColumns.viewTypesKnown;
import static dev.quiver.testing.EncodedColumns.views;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The view types (Utf8View, BinaryView, ListView, LargeListView), which Arrow Java reads from 14 on
 * (18 on Quiver's lines): streams Arrow Java writes read to the values its own reader gives; views
 * outside their data buffers, variadic buffer counts the batch does not hold, list views outside
 * their child are refused before the batch is loaded, with nothing left allocated. On Arrow 11 and
 * 12 these tests are skipped (the types do not parse: {@code IpcStrictReadTest}).
 */
class IpcViewTypesTest extends AllocatorTestBase {

  /** Row 2 of {@link dev.quiver.testing.EncodedColumns#views}: its string is out of line. */
  private static final int OUT_OF_LINE_ROW = 2;

  @BeforeEach
  void viewTypesExist() {
    assumeTrue(viewTypesKnown(), "this Arrow Java has no view types");
  }

  @Test
  void viewsReadAsArrowsOwnReaderReadsThem() throws IOException {
    byte[] stream = write(root -> {});
    List<List<String>> rows = assertSameAsArrow(stream, "views");
    assertTrue(
        rows.get(0).get(2).startsWith("a string longer than twelve bytes | "),
        rows.get(0).toString());
    assertTrue(rows.get(0).get(0).endsWith("[2,3] | [2,3] | "), rows.get(0).toString());
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#arrowBodyCodecs")
  void bodyCompressedViewsReadAsArrowReadsThem(CompressionUtil.CodecType codec) throws IOException {
    byte[] stream;
    try (VectorSchemaRoot root = views(allocator)) {
      stream = bodyCompressedStream(allocator, codec, null, root);
    }
    assertSameAsArrow(stream, "compressed views " + codec);
  }

  @ParameterizedTest
  @ValueSource(strings = {"v", "b"})
  void aViewOfNegativeLengthIsRefused(String column) throws IOException {
    byte[] stream = write(root -> viewBuffer(root, column).setInt(0, -3));
    assertRefused(stream, "negative length", "column " + column + ": row 0's view has length -3");
  }

  @Test
  void aViewIntoADataBufferTheColumnDoesNotHaveIsRefused() throws IOException {
    byte[] stream = write(root -> viewBuffer(root, "v").setInt(OUT_OF_LINE_ROW * 16L + 8, 1));
    assertRefused(stream, "buffer 1", "row 2's view points into data buffer 1 of 1");
    byte[] negative = write(root -> viewBuffer(root, "b").setInt(OUT_OF_LINE_ROW * 16L + 8, -1));
    assertRefused(negative, "buffer -1", "column b: row 2's view points into data buffer -1");
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 1 << 20, Integer.MAX_VALUE - 10})
  void aViewOutsideItsDataBufferIsRefused(int offset) throws IOException {
    byte[] stream = write(root -> viewBuffer(root, "v").setInt(OUT_OF_LINE_ROW * 16L + 12, offset));
    assertRefused(stream, "offset " + offset, "column v: row 2's view takes bytes " + offset);
  }

  @Test
  void aNullRowsViewIsNotRead() throws IOException {
    // Row 1 is null: whatever its view says, no value reads it.
    byte[] stream =
        write(
            root -> {
              viewBuffer(root, "v").setInt(16, 100);
              viewBuffer(root, "v").setInt(16 + 8, 99);
            });
    assertSameAsArrow(stream, "null view");
  }

  @Test
  void aNullRowsViewIsCheckedWhereTheNodeSaysThereAreNoNulls() throws IOException {
    // Row 1's bit says null, but the node counts no nulls: readers that trust the count (Quiver's
    // Spark columns) read row 1's view, so it is checked.
    try (VectorSchemaRoot root = views(allocator)) {
      viewBuffer(root, "v").setInt(16, 100);
      viewBuffer(root, "v").setInt(16 + 12, 1 << 20);
      try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
        List<ArrowFieldNode> nodes = new ArrayList<>(batch.getNodes());
        nodes.set(0, new ArrowFieldNode(nodes.get(0).getLength(), 0));
        try (ArrowRecordBatch noNulls =
            VariadicBufferCounts.batch(
                batch.getLength(), nodes, batch.getBuffers(), VariadicBufferCounts.of(batch))) {
          byte[] stream =
              new RawStreamWriter().schema(root.getSchema()).message(noNulls).end().toByteArray();
          assertRefused(stream, "no nulls counted", "column v: row 1's view ");
        }
      }
    }
  }

  @Test
  void variadicBufferCountsTheBatchDoesNotHoldAreRefused() throws IOException {
    assertRefused(withCounts(List.of(1000L, 1L)), "count 1000", "variadic buffer count 0 is 1000");
    assertRefused(
        withCounts(List.of(1L, 1L, 0L)),
        "three counts",
        "the batch has 3 variadic buffer counts; its schema has 2 view columns");
    assertRefused(withCounts(List.of(2L, 0L)), "counts moved", "column b: its views buffer has");
  }

  @ParameterizedTest
  @ValueSource(strings = {"l", "ll"})
  void aListViewOutsideItsChildIsRefused(String column) throws IOException {
    int width = column.equals("l") ? 4 : 8;
    assertRefused(
        write(root -> setListView(root.getVector(column), width, 3, 3, 2)),
        "past the child",
        "column " + column + ": row 3 has offset 3 and size 2 in a child of 4 elements");
    assertRefused(
        write(root -> setListView(root.getVector(column), width, 0, -1, 1)),
        "negative offset",
        "row 0 has offset -1");
    assertRefused(
        write(root -> setListView(root.getVector(column), width, 0, 1, -1)),
        "negative size",
        "row 0 has offset 1 and size -1");
  }

  /** The views buffer of view column {@code name}. */
  private static ArrowBuf viewBuffer(VectorSchemaRoot root, String name) {
    return root.getVector(name).getFieldBuffers().get(1);
  }

  /**
   * {@link dev.quiver.testing.EncodedColumns#views}, changed by {@code change}, as Arrow writes it.
   */
  private byte[] write(Consumer<VectorSchemaRoot> change) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = views(allocator)) {
      change.accept(root);
      try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
        writer.start();
        writer.writeBatch();
        writer.end();
      }
    }
    return out.toByteArray();
  }

  /** The views batch with the variadic buffer counts {@code counts} instead of its own. */
  private byte[] withCounts(List<Long> counts) throws IOException {
    try (VectorSchemaRoot root = views(allocator);
        ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch();
        ArrowRecordBatch changed =
            VariadicBufferCounts.batch(
                batch.getLength(), batch.getNodes(), batch.getBuffers(), counts)) {
      return new RawStreamWriter().schema(root.getSchema()).message(changed).end().toByteArray();
    }
  }

  private List<List<String>> assertSameAsArrow(byte[] stream, String source) throws IOException {
    return IpcTestSupport.assertSameAsArrow(stream, allocator, source);
  }

  private IpcFormatException assertRefused(byte[] stream, String source, String... says) {
    return IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }
}
