package dev.quiver.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Streams written by Arrow JS 21.2.0 (`arrow-js-21/`, see its README), a writer other than Arrow
 * Java's: every one Arrow Java reads, Quiver reads to the same values, batch by batch, with
 * dictionary-encoded cells compared as the values they stand for, or refuses by a rule of {@link
 * #REFUSED}. A stream Arrow Java cannot read on this profile's Arrow is skipped, naming why.
 */
class ArrowJsCorpusTest extends AllocatorTestBase {

  private static final String FOLDER = "/arrow-js-21/";

  static Stream<String> files() throws IOException {
    return digests().keySet().stream().sorted();
  }

  /** File name to SHA-256, from the folder's SHA256SUMS. */
  private static Map<String, String> digests() throws IOException {
    Map<String, String> digests = new HashMap<>();
    String sums = new String(resource("SHA256SUMS"), StandardCharsets.UTF_8);
    // sha256sum's lines: 64 hex digits, two spaces, the file's name.
    sums.lines()
        .filter(line -> !line.isBlank())
        .forEach(line -> digests.put(line.substring(64).trim(), line.substring(0, 64)));
    return digests;
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = ArrowJsCorpusTest.class.getResourceAsStream(FOLDER + name)) {
      if (in == null) {
        throw new IOException("no test resource " + FOLDER + name);
      }
      return in.readAllBytes();
    }
  }

  @ParameterizedTest
  @MethodSource("files")
  void quiverReadsWhatArrowJavaReads(String file) throws Exception {
    byte[] stream = resource(file);
    assertEquals(digests().get(file), sha256(stream), file + " is not the file written");
    List<List<String>> expected;
    try {
      expected = arrowJavaRows(stream);
    } catch (IOException | RuntimeException e) {
      Assumptions.abort("Arrow Java does not read " + file + " on this line: " + e);
      return;
    }
    assertTrue(expected.stream().mapToInt(List::size).sum() > 0, file + " has no rows");
    String refusal = REFUSED.get(file);
    if (refusal != null) {
      IpcFormatException refused =
          assertThrows(
              IpcFormatException.class,
              () -> ArrowIpc.decode(stream, StreamCodec.NONE, allocator, file).close());
      assertTrue(refused.getMessage().contains(refusal), refused.getMessage());
      return;
    }
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, file)) {
      assertEquals(expected, quiverRows(decoded), file);
    }
  }

  /**
   * What Arrow Java reads and Quiver refuses (docs/reliability.md): a stream whose dictionary a
   * later dictionary batch replaces, which Arrow JS writes whenever two batches carry different
   * dictionary vectors (Quiver gives a decoded stream one set of dictionaries for all its batches);
   * and Arrow JS's sparse union, whose utf8 child holds 4 values for the union's 5, where the
   * format wants every child of a sparse union as long as the union (Arrow Java does not check).
   */
  private static final Map<String, String> REFUSED =
      Map.of(
          "dictionary_extended.arrow_stream", "is replaced after record batches used it",
          "dictionary_replaced.arrow_stream", "is replaced after record batches used it",
          "sparse_union.arrow_stream",
              "column s has 4 values where its parent sparse union u needs 5");

  private List<List<String>> arrowJavaRows(byte[] stream) throws IOException {
    List<List<String>> batches = new ArrayList<>();
    try (ArrowStreamReader reader =
        new ArrowStreamReader(new ByteArrayInputStream(stream), allocator)) {
      while (reader.loadNextBatch()) {
        // Arrow Java's dictionaries are those of the batch just loaded (replaced or extended).
        batches.add(rows(reader.getVectorSchemaRoot(), reader));
      }
    }
    return batches;
  }

  private List<List<String>> quiverRows(DecodedStream decoded) {
    List<List<String>> batches = new ArrayList<>();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      VectorLoader loader = new VectorLoader(root);
      for (ArrowRecordBatch batch : decoded.batches()) {
        loader.load(batch);
        batches.add(rows(root, decoded));
      }
    }
    return batches;
  }

  /** One string per row; a dictionary-encoded cell as the value its index points at. */
  private static List<String> rows(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    List<String> rows = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      StringBuilder row = new StringBuilder();
      for (FieldVector vector : root.getFieldVectors()) {
        row.append(cell(vector, r, dictionaries)).append(" | ");
      }
      rows.add(row.toString());
    }
    return rows;
  }

  private static String cell(FieldVector vector, int row, DictionaryProvider dictionaries) {
    DictionaryEncoding encoding = vector.getField().getDictionary();
    if (encoding == null || vector.isNull(row)) {
      return render(vector.getObject(row));
    }
    long index = ((BaseIntVector) vector).getValueAsLong(row);
    FieldVector values = dictionaries.lookup(encoding.getId()).getVector();
    return "dictionary " + render(values.getObject((int) index));
  }

  private static String render(Object value) {
    return value instanceof byte[] ? Arrays.toString((byte[]) value) : String.valueOf(value);
  }

  private static String sha256(byte[] bytes) throws NoSuchAlgorithmException {
    StringBuilder hex = new StringBuilder();
    for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) {
      hex.append(String.format("%02x", b));
    }
    return hex.toString();
  }
}
