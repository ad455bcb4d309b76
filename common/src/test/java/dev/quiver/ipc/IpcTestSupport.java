package dev.quiver.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.BodyCompressedStreams;
import dev.quiver.testing.Codecs;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionUtil;
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

  /** {@code batches} (one schema) as Arrow Java's stream writer writes them, uncompressed. */
  static byte[] arrowStream(
      BufferAllocator allocator, DictionaryProvider dictionaries, VectorSchemaRoot... batches)
      throws IOException {
    return BodyCompressedStreams.uncompressed(allocator, dictionaries, batches);
  }

  /**
   * One batch of {@code schema}, filled by {@code fill} (the first column's length is the row
   * count), as Arrow Java's stream writer writes it.
   */
  static byte[] arrowStream(
      BufferAllocator allocator, Schema schema, Consumer<VectorSchemaRoot> fill)
      throws IOException {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      fill.accept(root);
      root.setRowCount(root.getVector(0).getValueCount());
      return arrowStream(allocator, null, root);
    }
  }

  /**
   * {@code batches} (one schema) as Arrow Java writes them with body compression {@code codec}; the
   * test is skipped where this Arrow Java (before 12) writes none.
   */
  static byte[] bodyCompressedStream(
      BufferAllocator allocator,
      CompressionUtil.CodecType codec,
      DictionaryProvider dictionaries,
      VectorSchemaRoot... batches)
      throws IOException {
    assumeTrue(
        BodyCompressedStreams.available(),
        "this Arrow Java (before 12) writes no body compression");
    return BodyCompressedStreams.write(allocator, codec, dictionaries, batches);
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
   * Quiver and with Arrow Java's reader, as {@link #assertReadsAsArrowReads} checks them; returns
   * the rows.
   */
  static List<List<String>> assertSameAsArrow(
      byte[] stream, BufferAllocator allocator, String source) throws IOException {
    return assertReadsAsArrowReads(stream, stream, StreamCodec.NONE, allocator, source);
  }

  /**
   * Asserts Quiver decodes {@code quiverReads}, compressed with {@code codec}, to what Arrow Java's
   * reader (with its commons-compress body codecs) decodes from {@code arrowReads}: the same rows
   * batch by batch, the same dictionaries, and at least one row in the first batch. Returns Arrow's
   * rows.
   */
  static List<List<String>> assertReadsAsArrowReads(
      byte[] arrowReads,
      byte[] quiverReads,
      StreamCodec codec,
      BufferAllocator allocator,
      String source)
      throws IOException {
    List<List<String>> arrowRows = new ArrayList<>();
    List<List<String>> arrowDictionaries;
    try (ArrowStreamReader reader =
        new ArrowStreamReader(
            new ByteArrayInputStream(arrowReads), allocator, CommonsCompressionFactory.INSTANCE)) {
      while (reader.loadNextBatch()) {
        arrowRows.add(rows(reader.getVectorSchemaRoot()));
      }
      arrowDictionaries = dictionaryRows(reader);
    }
    byte[] input = Codecs.compress(codec, quiverReads);
    try (DecodedStream decoded = ArrowIpc.decode(input, codec, allocator, source)) {
      assertEquals(arrowRows, batchRows(decoded, allocator), source);
      assertEquals(arrowDictionaries, dictionaryRows(decoded), source + " dictionaries");
    }
    assertTrue(!arrowRows.isEmpty() && !arrowRows.get(0).isEmpty(), source);
    return arrowRows;
  }

  /** The values of each dictionary {@code provider} holds, in the order of their ids. */
  private static List<List<String>> dictionaryRows(DictionaryProvider provider) {
    List<List<String>> out = new ArrayList<>();
    for (long id : new TreeSet<>(provider.getDictionaryIds())) {
      FieldVector values = provider.lookup(id).getVector();
      List<String> rows = new ArrayList<>();
      for (int i = 0; i < values.getValueCount(); i++) {
        rows.add(cell(values.getObject(i)));
      }
      out.add(rows);
    }
    return out;
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
