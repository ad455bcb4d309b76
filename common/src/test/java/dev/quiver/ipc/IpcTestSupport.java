package dev.quiver.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.StreamCodec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/** Encoding, reading back and comparing Arrow data in the IPC tests. */
final class IpcTestSupport {

  private IpcTestSupport() {}

  /** {@code root} as a stream of one batch, compressed with {@code codec}; closes the root. */
  static byte[] streamOf(VectorSchemaRoot root, StreamCodec codec) throws IOException {
    try (root) {
      return ArrowIpc.encode(root, null, codec);
    }
  }

  /** Encodes {@code roots} (one schema) as one stream, one record batch per root. */
  static byte[] encodeBatches(
      Schema schema,
      List<VectorSchemaRoot> roots,
      DictionaryProvider dictionaries,
      StreamCodec codec,
      BufferAllocator allocator)
      throws IOException {
    List<ArrowRecordBatch> batches = new ArrayList<>();
    try {
      for (VectorSchemaRoot root : roots) {
        batches.add(new VectorUnloader(root).getRecordBatch());
      }
      return ArrowIpc.encode(schema, batches, dictionaries, codec, allocator);
    } finally {
      for (ArrowRecordBatch batch : batches) {
        batch.close();
      }
    }
  }

  /**
   * Decodes {@code stream} as {@code source} and asserts it is refused: an {@link
   * IpcFormatException} whose message names what was read ({@code source}) and says each of {@code
   * says} (where and why), with nothing left allocated. Any other outcome fails the test.
   */
  static IpcFormatException assertRefused(
      byte[] stream, StreamCodec codec, BufferAllocator allocator, String source, String... says) {
    return assertRefusedWithin(Long.MAX_VALUE, stream, codec, allocator, source, says);
  }

  /** {@link #assertRefused}, with the decode's peak allocation under {@code peakBound} bytes. */
  static IpcFormatException assertRefusedWithin(
      long peakBound,
      byte[] stream,
      StreamCodec codec,
      BufferAllocator allocator,
      String source,
      String... says) {
    try (BufferAllocator decode = allocator.newChildAllocator(source, 0, Long.MAX_VALUE)) {
      IpcFormatException refused;
      try {
        ArrowIpc.decode(stream, codec, decode, source).close();
        throw new AssertionError(source + " decoded");
      } catch (IpcFormatException e) {
        refused = e;
      } catch (IOException | RuntimeException e) {
        throw new AssertionError(source + ": " + e, e);
      }
      String message = refused.getMessage();
      assertTrue(message.contains(source), () -> source + ": " + message);
      for (String said : says) {
        assertTrue(message.contains(said), () -> "no «" + said + "» in: " + message);
      }
      assertEquals(0, decode.getAllocatedMemory(), () -> source + " leaked");
      assertTrue(
          decode.getPeakMemoryAllocation() < peakBound,
          () -> source + ": peak " + decode.getPeakMemoryAllocation());
      return refused;
    }
  }

  /** One string per row, each cell rendered so that equal values give equal strings. */
  static List<String> rows(VectorSchemaRoot root) {
    List<String> rows = new ArrayList<>(root.getRowCount());
    for (int r = 0; r < root.getRowCount(); r++) {
      StringBuilder row = new StringBuilder();
      for (FieldVector vector : root.getFieldVectors()) {
        row.append(cell(vector.getObject(r))).append(" | ");
      }
      rows.add(row.toString());
    }
    return rows;
  }

  private static String cell(Object value) {
    // VarBinary gives byte[], whose toString is its identity.
    return value instanceof byte[] ? Arrays.toString((byte[]) value) : String.valueOf(value);
  }

  /** The rows of each record batch of {@code stream}, loaded into a root of its schema. */
  static List<List<String>> batchRows(DecodedStream stream, BufferAllocator allocator) {
    List<List<String>> out = new ArrayList<>();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(stream.schema(), allocator)) {
      VectorLoader loader = new VectorLoader(root);
      for (ArrowRecordBatch batch : stream.batches()) {
        loader.load(batch);
        out.add(rows(root));
      }
    }
    return out;
  }

  /**
   * Decodes {@code stream} (no Spark codec; body compression read by Arrow's commons codecs) with
   * Quiver and with Arrow Java's reader, asserts both give the same rows, batch by batch, and at
   * least one row; returns them.
   */
  static List<List<String>> assertSameAsArrow(
      byte[] stream, BufferAllocator allocator, String source) throws IOException {
    List<List<String>> arrowRows = new ArrayList<>();
    try (ArrowStreamReader reader =
        new ArrowStreamReader(
            new ByteArrayInputStream(stream), allocator, CommonsCompressionFactory.INSTANCE)) {
      while (reader.loadNextBatch()) {
        arrowRows.add(rows(reader.getVectorSchemaRoot()));
      }
    }
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, source)) {
      assertEquals(arrowRows, batchRows(decoded, allocator), source);
    }
    assertTrue(!arrowRows.isEmpty() && !arrowRows.get(0).isEmpty(), source);
    return arrowRows;
  }

  /** All rows of {@code stream}, batch after batch. */
  static List<String> allRows(DecodedStream stream, BufferAllocator allocator) {
    List<String> out = new ArrayList<>();
    for (List<String> batch : batchRows(stream, allocator)) {
      out.addAll(batch);
    }
    return out;
  }
}
