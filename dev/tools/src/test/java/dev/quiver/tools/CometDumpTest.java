package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.ShuffleIndex;
import dev.quiver.testing.CometFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code dev/dump} ({@link QuiverDump}) over the files Comet 1.2.0 wrote: the totals it reports,
 * and its {@code --rows} JSON lines read back and compared value by value with the rows Spark
 * computed for {@code dim} ({@code dim-rows.json.gz}).
 */
class CometDumpTest {

  private static final int DIM_ROWS = 20_000;
  private static final String DIM_NAMES = "k,b,i,s,bin,dec,dt,ts,st,arr,m";

  /** Decimals kept exact (Jackson may still drop their trailing zeros: both sides alike). */
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  private static final Pattern SHUFFLE_TOTAL =
      Pattern.compile("^total: 16 partitions, (\\d+) blocks?, (\\d+) rows$", Pattern.MULTILINE);
  private static final Pattern PARTITION =
      Pattern.compile(
          "^partition (\\d+): file offset (\\d+), (\\d+) bytes, (\\d+) blocks?, (\\d+) rows$",
          Pattern.MULTILINE);
  private static final Pattern BLOCK =
      Pattern.compile(
          "^  block (\\d+): file offset (\\d+), (\\d+) bytes \\(body (\\d+)\\), codec (\\S+) \\((\\w+)\\),"
              + " (\\d+) fields, (\\d+) rows$",
          Pattern.MULTILINE);

  private static Path root;

  /** Every row of {@code dim} by {@code k}, as Spark's JSON writer wrote it. */
  private static Map<Long, JsonNode> dim;

  private static Map<Long, JsonNode> broadcastRows;
  private static final Map<String, DumpRun> shuffleRuns = new HashMap<>();
  private static String broadcastLines;

  @BeforeAll
  static void findTestData() throws IOException {
    root = CometFiles.root();
    dim = new HashMap<>();
    try (InputStream in =
            new GZIPInputStream(Files.newInputStream(root.resolve("dim-rows.json.gz")));
        BufferedReader lines =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = lines.readLine()) != null; ) {
        JsonNode row = JSON.readTree(line);
        dim.put(row.get("k").asLong(), row);
      }
    }
    assertEquals(DIM_ROWS, dim.size());
  }

  private static String file(String relative) {
    return root.resolve(relative).toString();
  }

  @Test
  void broadcastValueTotals() {
    DumpRun run = DumpRun.of(file("broadcast-0.bin"));
    assertEquals(0, run.status, run::toString);
    assertEquals("", run.err, run::toString);
    assertTrue(run.out.contains("codec lz4 (Spark's lz4 codec"), run::toString);
    assertTrue(run.out.contains("\nschema (stream): 11 fields\n"), run::toString);
    // Comet's quirks, shown as they are: empty names, every field marked non-nullable.
    assertTrue(run.out.contains("\n   0 \"\" Int(64, true) not null\n"), run::toString);
    assertTrue(
        run.out.contains("\n   7 \"\" Timestamp(MICROSECOND, UTC) not null\n"), run::toString);
    assertTrue(run.out.contains("\nbatch 0: 20000 rows, "), run::toString);
    assertTrue(run.out.contains("\ndictionaries: none\n"), run::toString);
    assertTrue(run.out.endsWith("\ntotal: 1 batch, 20000 rows\n"), run::toString);
  }

  /**
   * One run per codec over both maps, the first named by its data file and the second by its index,
   * with {@code --rows}: the rows on stdout, the summary on stderr.
   */
  private static DumpRun shuffleRun(String codec) {
    return shuffleRuns.computeIfAbsent(
        codec,
        c ->
            DumpRun.of(
                "--rows",
                file("shuffle/" + c + "/" + CometFiles.MAPS.get(0) + ".data"),
                file("shuffle/" + c + "/" + CometFiles.MAPS.get(1) + ".index")));
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void shuffleTotalsOverBothMaps(String codec) throws IOException {
    DumpRun run = shuffleRun(codec);
    assertEquals(0, run.status, run::toString);
    String summary = run.err;
    assertTrue(summary.endsWith("\nall 2 files: 20000 rows\n"), run::toString);
    String[] files = summary.split("(?m)(?=^shuffle data )", -1);
    assertEquals(2, files.length, run::toString);
    long rows = 0;
    String tag = codec.equals("lz4") ? "LZ4_" : "SNAP";
    for (int f = 0; f < files.length; f++) {
      String map = CometFiles.MAPS.get(f);
      String out = files[f];
      Path data = root.resolve("shuffle/" + codec + "/" + map + ".data");
      assertTrue(out.startsWith("shuffle data " + data + ": "), out);
      assertTrue(out.contains("index " + map + ".index: 16 partitions\n"), out);
      if (f == 0) {
        assertTrue(out.contains("\nschema (from the first block): 11 fields\n"), out);
        assertTrue(out.contains("\n   0 \"k\" Int(64, true)\n"), out);
        assertTrue(out.contains("\n   7 \"ts\" Timestamp(MICROSECOND, UTC)\n"), out);
      }

      ShuffleIndex index = ShuffleIndex.read(data.resolveSibling(map + ".index"), Files.size(data));
      assertEquals(CometFiles.PARTITIONS, index.partitions(), map);
      long[] offsets = index.offsets();
      Matcher partition = PARTITION.matcher(out);
      long partitionRows = 0;
      int partitions = 0;
      while (partition.find()) {
        int p = Integer.parseInt(partition.group(1));
        assertEquals(partitions, p, out);
        assertEquals(offsets[p], Long.parseLong(partition.group(2)));
        assertEquals(offsets[p + 1] - offsets[p], Long.parseLong(partition.group(3)));
        partitionRows += Long.parseLong(partition.group(5));
        partitions++;
      }
      assertEquals(CometFiles.PARTITIONS, partitions, out);

      Matcher block = BLOCK.matcher(out);
      long blockRows = 0;
      long next = 0;
      int blocks = 0;
      while (block.find()) {
        assertEquals(next, Long.parseLong(block.group(2)), "blocks follow each other");
        next += Long.parseLong(block.group(3));
        assertEquals(Long.parseLong(block.group(3)) - 20, Long.parseLong(block.group(4)));
        assertEquals(tag, block.group(5));
        assertEquals(codec, block.group(6));
        assertEquals(11, Integer.parseInt(block.group(7)));
        blockRows += Long.parseLong(block.group(8));
        blocks++;
      }
      assertEquals(Files.size(data), next, "the blocks cover the data file");
      assertEquals(CometFiles.PARTITIONS, blocks, "one block per partition");

      Matcher total = SHUFFLE_TOTAL.matcher(out);
      assertTrue(total.find(), out);
      assertEquals(blocks, Integer.parseInt(total.group(1)));
      long fileRows = Long.parseLong(total.group(2));
      assertEquals(fileRows, partitionRows);
      assertEquals(fileRows, blockRows);
      rows += fileRows;
    }
    assertEquals(DIM_ROWS, rows, codec + ": both maps together hold dim");
  }

  @Test
  void cometZstdVariantEndsWithTheSettingAndExitOne() {
    DumpRun run = DumpRun.of(file("shuffle/zstd/" + CometFiles.MAPS.get(0) + ".data"));
    assertEquals(1, run.status, run::toString);
    assertOneErrorLine(run);
    assertTrue(
        run.err.contains(BlockCodec.COMET_OFFSETS_AS_LENGTHS_SETTING + "=false"), run::toString);
    assertTrue(run.err.contains("\"\\xDASTD\" (hex DA 53 54 44)"), run::toString);
    assertTrue(run.err.contains("shuffle block 0 at stream offset 0"), run::toString);
    assertTrue(run.err.contains("partition 0, which starts at file offset 0"), run::toString);
    // What was read before the failure is shown.
    assertTrue(run.out.contains("\npartition 0: file offset 0, "), run::toString);
  }

  @Test
  void verboseAddsTheStackTrace() {
    DumpRun run = DumpRun.of("--verbose", file("shuffle/zstd/" + CometFiles.MAPS.get(1) + ".data"));
    assertEquals(1, run.status, run::toString);
    assertTrue(run.err.startsWith("error: "), run::toString);
    assertTrue(run.err.contains("\n\tat dev.quiver.shuffle."), run::toString);
  }

  /** The broadcast's rows as the dump writes them, keyed by the names of {@code dim}. */
  private static Map<Long, JsonNode> broadcastRows() throws IOException {
    if (broadcastRows == null) {
      DumpRun run = DumpRun.of("--rows", "--names", DIM_NAMES, file("broadcast-0.bin"));
      assertEquals(0, run.status, run::toString);
      // With --rows the summary goes to stderr and stdout holds only the rows.
      assertTrue(run.err.endsWith("\ntotal: 1 batch, 20000 rows\n"), run::toString);
      broadcastRows = parseRows(run.out);
      broadcastLines = run.out;
    }
    return broadcastRows;
  }

  @Test
  void broadcastRowsAreDimByPosition() throws IOException {
    Map<Long, JsonNode> rows = broadcastRows();
    assertEquals(dim.keySet(), rows.keySet());
    for (Map.Entry<Long, JsonNode> row : rows.entrySet()) {
      assertSameRow(dim.get(row.getKey()), row.getValue());
    }
  }

  @Test
  void broadcastRowsWithoutNamesAreKeyedByPosition() throws IOException {
    DumpRun run = DumpRun.of("--rows", "--limit", "3", file("broadcast-0.bin"));
    assertEquals(0, run.status, run::toString);
    String[] lines = run.out.lines().toArray(String[]::new);
    assertEquals(3, lines.length, run::toString);
    JsonNode first = JSON.readTree(lines[0]);
    List<String> keys = new ArrayList<>();
    first.fieldNames().forEachRemaining(keys::add);
    assertEquals(
        Arrays.asList("_0", "_1", "_2", "_3", "_4", "_5", "_6", "_7", "_8", "_9", "_10"), keys);
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void shuffleRowsOfBothMapsAreDim(String codec) throws IOException {
    DumpRun run = shuffleRun(codec);
    assertEquals(0, run.status, run::toString);
    Map<Long, JsonNode> rows = parseRows(run.out);
    assertEquals(dim.keySet(), rows.keySet());
    for (Map.Entry<Long, JsonNode> row : rows.entrySet()) {
      assertSameRow(dim.get(row.getKey()), row.getValue());
    }
  }

  /** A few rows spelled out, so a reader sees what the JSON holds (and nulls as null). */
  @Test
  void chosenRowsSpelledOut() throws IOException {
    Map<Long, JsonNode> rows = broadcastRows();

    JsonNode zero = rows.get(0L); // k % 5 == 0 and k % 7 == 0: s and arr are null
    assertTrue(zero.get("s").isNull());
    assertTrue(zero.get("arr").isNull());
    assertEquals(
        "b0",
        new String(
            Base64.getDecoder().decode(zero.get("bin").asText()), StandardCharsets.US_ASCII));
    assertTrue(
        broadcastLines.contains(
            "{\"k\":0,\"b\":true,\"i\":0,\"s\":null,\"bin\":\"YjA=\",\"dec\":0.00,"),
        "scale 2, as decimal(10,2)");
    assertEquals(0, zero.get("dec").decimalValue().signum());
    assertEquals("2020-01-01", zero.get("dt").asText());
    assertEquals("2020-09-13T12:26:40.000000Z", zero.get("ts").asText());

    JsonNode row = rows.get(12_346L);
    JsonNode expected = dim.get(12_346L);
    assertEquals(0, expected.get("dec").decimalValue().compareTo(row.get("dec").decimalValue()));
    assertTrue(broadcastLines.contains("{\"k\":12346,"), "k 12346");
    assertEquals(expected.get("dt").asText(), row.get("dt").asText());
    assertEquals(
        Instant.parse(expected.get("ts").asText()),
        Instant.parse(row.get("ts").asText()).truncatedTo(ChronoUnit.MILLIS));
    assertEquals(expected.get("st"), row.get("st"));
    assertEquals(expected.get("arr"), row.get("arr"));
    assertEquals(expected.get("m"), row.get("m"));
    assertEquals(expected.get("bin"), row.get("bin"));
    assertFalse(row.get("s").isNull());
  }

  private static void assertOneErrorLine(DumpRun run) {
    assertTrue(run.err.startsWith("error: "), run::toString);
    assertEquals(1, run.err.split("\n").length, run::toString);
  }

  private static Map<Long, JsonNode> parseRows(String out) throws IOException {
    Map<Long, JsonNode> rows = new HashMap<>();
    for (String line : out.lines().toArray(String[]::new)) {
      JsonNode row = JSON.readTree(line);
      assertTrue(row.isObject(), line);
      JsonNode k = row.get("k");
      assertNotNull(k, line);
      assertTrue(rows.put(k.asLong(), row) == null, "k " + k + " twice");
    }
    return rows;
  }

  /**
   * {@code actual} (the dump's row) holds {@code expected} (Spark's): nulls, which Spark leaves
   * out, written as null; timestamps compared at the millisecond precision Spark's JSON keeps.
   */
  private static void assertSameRow(JsonNode expected, JsonNode actual) {
    JsonNode normalized = withoutNulls(actual);
    ObjectNode object = (ObjectNode) normalized;
    String ts = object.get("ts").asText();
    object.put("ts", Instant.parse(ts).truncatedTo(ChronoUnit.MILLIS).toString());
    ObjectNode want = (ObjectNode) expected.deepCopy();
    want.put("ts", Instant.parse(want.get("ts").asText()).toString());
    assertEquals(want, object, () -> "k " + expected.get("k") + ": dump wrote " + actual);
  }

  // JsonNode.fields() is deprecated from Jackson 2.19 (Arrow 19's) for properties(), which Arrow 11
  // to 18's Jackson lacks.
  @SuppressWarnings("deprecation")
  private static JsonNode withoutNulls(JsonNode node) {
    if (node.isObject()) {
      ObjectNode copy = JSON.createObjectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        if (!field.getValue().isNull()) {
          copy.set(field.getKey(), withoutNulls(field.getValue()));
        }
      }
      return copy;
    }
    return node;
  }
}
