package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.ShuffleBlockWriter;
import dev.quiver.testing.TestData;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code dev/dump} ({@link QuiverDump}) over files written here: broadcast values in each Spark
 * codec, a Quiver-written shuffle file with an index and every block codec, and files that are
 * damaged or neither format. The files Comet wrote are covered by {@code CometDumpTest}.
 */
@org.junit.jupiter.api.Tag("bad-input")
class QuiverDumpTest {

  private static final int ROWS = 100;

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "zstd", "snappy", "none"})
  void broadcastValueInEachSparkCodec(String codec) throws IOException {
    Path file = dir.resolve("broadcast-" + codec + ".bin");
    try (BufferAllocator allocator = new RootAllocator(64 << 20)) {
      try (VectorSchemaRoot root = TestData.allTypes(allocator, ROWS, 3)) {
        Files.write(
            file,
            ArrowIpc.encode(
                root,
                new DictionaryProvider.MapDictionaryProvider(),
                SparkStreamCodec.forName(codec)));

        DumpRun summary = DumpRun.of("--codec", codec, file);
        assertEquals(0, summary.status, summary::toString);
        assertTrue(summary.out.contains("codec " + codec + " ("), summary::toString);
        assertTrue(summary.out.contains("\nschema (stream): 17 fields\n"), summary::toString);
        assertTrue(
            summary.out.endsWith("\ntotal: 1 batch, " + ROWS + " rows\n"), summary::toString);

        DumpRun rows = DumpRun.of("--rows", "--codec=" + codec, file);
        assertEquals(0, rows.status, rows::toString);
        String[] lines = rows.out.lines().toArray(String[]::new);
        assertEquals(ROWS, lines.length);
        for (int r = 0; r < ROWS; r++) {
          assertRow(root, r, JSON.readTree(lines[r]));
          if (r % TestData.NULL_EVERY != 0) {
            // Jackson may drop a decimal's trailing zeros; the line must keep the column's scale.
            BigDecimal dec = ((DecimalVector) root.getVector("dec")).getObject(r);
            assertTrue(lines[r].contains("\"dec\":" + dec.toPlainString() + ","), lines[r]);
          }
        }
      }
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }

  /** The JSON line of row {@code r} against the vectors' values. */
  private static void assertRow(VectorSchemaRoot root, int r, JsonNode row) {
    String what = "row " + r + ": " + row;
    if (r % TestData.NULL_EVERY == 0) {
      for (JsonNode value : row) {
        assertTrue(value.isNull(), what);
      }
      return;
    }
    assertEquals(((BigIntVector) root.getVector("i64")).get(r), row.get("i64").asLong(), what);
    assertEquals(((Float4Vector) root.getVector("f32")).get(r), row.get("f32").floatValue(), what);
    BigDecimal dec = ((DecimalVector) root.getVector("dec")).getObject(r);
    assertEquals(0, dec.compareTo(row.get("dec").decimalValue()), what);
    assertEquals(
        LocalDate.ofEpochDay(((DateDayVector) root.getVector("date")).get(r)),
        LocalDate.parse(row.get("date").asText()),
        what);
    String ts = row.get("ts").asText();
    assertTrue(ts.matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z"), what);
    assertEquals(
        Instant.EPOCH.plus(
            ((TimeStampMicroTZVector) root.getVector("ts")).get(r), ChronoUnit.MICROS),
        Instant.parse(ts),
        what);
    String ntz = row.get("ts_ntz").asText();
    assertFalse(ntz.endsWith("Z"), what + ": a timestamp without a zone is a local date-time");
    assertEquals(
        ((TimeStampMicroVector) root.getVector("ts_ntz")).getObject(r),
        LocalDateTime.parse(ntz),
        what);
    assertEquals(
        ((VarCharVector) root.getVector("s")).getObject(r).toString(), row.get("s").asText(), what);
    assertArrayEquals(
        ((VarBinaryVector) root.getVector("bin")).get(r),
        Base64.getDecoder().decode(row.get("bin").asText()),
        what);
    assertEquals(r, row.get("st").get("x").asInt(), what);
    assertEquals("y" + r, row.get("st").get("y").asText(), what);
    List<?> arr = ((ListVector) root.getVector("arr")).getObject(r);
    assertEquals(arr.size(), row.get("arr").size(), what);
    for (int i = 0; i < arr.size(); i++) {
      JsonNode element = row.get("arr").get(i);
      assertEquals(
          arr.get(i) == null ? null : arr.get(i).toString(),
          element.isNull() ? null : element.asText(),
          what);
    }
    List<?> entries = ((MapVector) root.getVector("m")).getObject(r);
    assertEquals(entries.size(), row.get("m").size(), what);
    for (int i = 0; i < entries.size(); i++) {
      assertEquals(r * 10 + i, row.get("m").get("k" + i).asInt(), what);
    }
    assertTrue(row.get("n").isNull(), what);
  }

  @Test
  void unsignedIntegersAsUnsigned() throws IOException {
    Path file = dir.resolve("unsigned.bin");
    List<Field> fields = new ArrayList<>();
    for (int width : new int[] {8, 16, 32, 64}) {
      fields.add(new Field("u" + width, FieldType.nullable(new ArrowType.Int(width, false)), null));
    }
    try (BufferAllocator allocator = new RootAllocator(16 << 20)) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(fields), allocator)) {
        ((UInt1Vector) root.getVector("u8")).setSafe(0, 0xFF);
        ((UInt2Vector) root.getVector("u16")).setSafe(0, 0xFFFF);
        ((UInt4Vector) root.getVector("u32")).setSafe(0, -1);
        ((UInt8Vector) root.getVector("u64")).setSafe(0, -1L);
        root.setRowCount(1);
        Files.write(
            file,
            ArrowIpc.encode(
                root, new DictionaryProvider.MapDictionaryProvider(), SparkStreamCodec.NONE));
      }
      assertEquals(0, allocator.getAllocatedMemory());
    }
    DumpRun run = DumpRun.of("--codec", "none", "--rows", file);
    assertEquals(0, run.status, run::toString);
    assertEquals(
        "{\"u8\":255,\"u16\":65535,\"u32\":4294967295,\"u64\":18446744073709551615}\n", run.out);
  }

  @Test
  void broadcastReadWithTheWrongCodecFailsInOneLine() throws IOException {
    Path file = dir.resolve("broadcast.bin");
    try (BufferAllocator allocator = new RootAllocator(64 << 20);
        VectorSchemaRoot root = TestData.allTypes(allocator, ROWS, 4)) {
      Files.write(
          file,
          ArrowIpc.encode(
              root, new DictionaryProvider.MapDictionaryProvider(), SparkStreamCodec.LZ4));
    }
    DumpRun.of("--codec", "zstd", file)
        .assertOneLineError("is neither a shuffle file (no index beside it, no block header");
    DumpRun.of("--codec", "zstd", "--format", "broadcast", file)
        .assertOneLineError("Cannot decode Arrow IPC stream (broadcast value broadcast.bin)");
  }

  /** Three partitions, the middle one empty, blocks in every codec. Returns the data file. */
  private Path quiverShuffleFile() throws IOException {
    Path data = dir.resolve("shuffle_0_1_0.data");
    List<Long> offsets = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator(64 << 20);
        OutputStream out = Files.newOutputStream(data)) {
      ShuffleBlockWriter[] writers = {
        new ShuffleBlockWriter(out, BlockCodec.LZ4),
        new ShuffleBlockWriter(out, BlockCodec.ZSTD),
        new ShuffleBlockWriter(out, BlockCodec.SNAPPY),
        new ShuffleBlockWriter(out, BlockCodec.NONE)
      };
      long at = 0;
      offsets.add(at);
      try (VectorSchemaRoot root = TestData.allTypes(allocator, 10, 5)) {
        at += writers[0].write(root);
        at += writers[1].write(root);
      }
      offsets.add(at);
      offsets.add(at); // partition 1: empty
      try (VectorSchemaRoot root = TestData.allTypes(allocator, 7, 6)) {
        at += writers[2].write(root);
        at += writers[3].write(root);
      }
      offsets.add(at);
    }
    writeIndex(dir.resolve("shuffle_0_1_0.index"), offsets);
    return data;
  }

  private static void writeIndex(Path index, List<Long> offsets) throws IOException {
    try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(index))) {
      for (long offset : offsets) {
        out.writeLong(offset);
      }
    }
  }

  @Test
  void quiverShuffleFileWithEveryBlockCodec() throws IOException {
    Path data = quiverShuffleFile();
    DumpRun run = DumpRun.of(data);
    assertEquals(0, run.status, run::toString);
    assertTrue(run.out.contains("index shuffle_0_1_0.index: 3 partitions\n"), run::toString);
    assertTrue(run.out.contains("\nschema (from the first block): 17 fields\n"), run::toString);
    assertTrue(run.out.contains("\npartition 1: file offset "), run::toString);
    assertTrue(run.out.contains(", 0 bytes, 0 blocks, 0 rows\n"), run::toString);
    for (String tag : new String[] {"LZ4_ (lz4)", "ZSTD (zstd)", "SNAP (snappy)", "NONE (none)"}) {
      assertTrue(run.out.contains(", codec " + tag + ", 17 fields, "), tag + "\n" + run);
    }
    assertTrue(run.out.endsWith("\ntotal: 3 partitions, 4 blocks, 34 rows\n"), run::toString);

    DumpRun one = DumpRun.of("--partition", 2, "--rows", data);
    assertEquals(0, one.status, one::toString);
    assertEquals(14, one.out.split("\n").length, one::toString);
    assertTrue(one.err.endsWith("\ntotal: partition 2 only: 2 blocks, 14 rows\n"), one::toString);

    DumpRun limited = DumpRun.of("--rows", "--limit", 3, data);
    assertEquals(3, limited.out.split("\n").length, limited::toString);

    DumpRun outside = DumpRun.of("--partition", 3, data);
    assertEquals(2, outside.status, outside::toString);
    assertTrue(
        outside.err.startsWith("dump: --partition 3: the file has partitions 0 to 2\n"),
        outside::toString);
  }

  @Test
  void blocksWithoutAnIndexAreOneStream() throws IOException {
    Path data = quiverShuffleFile();
    Path blocks = dir.resolve("blocks.bin");
    Files.copy(data, blocks);
    DumpRun run = DumpRun.of(blocks);
    assertEquals(0, run.status, run::toString);
    assertTrue(run.out.contains(": one stream of blocks\n"), run::toString);
    assertTrue(run.out.endsWith("\ntotal: 4 blocks, 34 rows\n"), run::toString);
  }

  @Test
  void truncatedDataFileNamesTheIndex() throws IOException {
    Path data = quiverShuffleFile();
    byte[] bytes = Files.readAllBytes(data);
    Files.write(data, Arrays.copyOf(bytes, bytes.length - 5));
    DumpRun.of(data)
        .assertOneLineError(
            "shuffle_0_1_0.index says the data ends at file offset "
                + bytes.length
                + ", but the data file has "
                + (bytes.length - 5)
                + " bytes (truncated)");
  }

  @Test
  void corruptBlockNamesItsFileOffset() throws IOException {
    Path data = quiverShuffleFile();
    byte[] bytes = Files.readAllBytes(data);
    // Partition 2's first block starts where partition 1 (empty) does; flip its codec tag.
    long start = startOfPartition(dir.resolve("shuffle_0_1_0.index"), 2);
    bytes[(int) start + 16] = 'X';
    Files.write(data, bytes);
    DumpRun run = DumpRun.of(data);
    run.assertOneLineError(
        "Corrupt shuffle block 0 at stream offset 0 (shuffle_0_1_0.data partition 2, which starts"
            + " at file offset "
            + start
            + "): codec tag \"XNAP\"");
    assertTrue(run.err.endsWith("[block at file offset " + start + "]\n"), run::toString);
    // What was read before the failure is shown.
    assertTrue(run.out.contains("\npartition 2: file offset " + start + ", "), run::toString);
    assertTrue(run.out.contains(": failed after 0 blocks\n"), run::toString);
  }

  private static long startOfPartition(Path index, int p) throws IOException {
    return java.nio.ByteBuffer.wrap(Files.readAllBytes(index)).getLong(p * 8);
  }

  @Test
  void badIndexNamesTheOffset() throws IOException {
    Path data = quiverShuffleFile();
    writeIndex(dir.resolve("shuffle_0_1_0.index"), Arrays.asList(0L, 500L, 100L, Files.size(data)));
    DumpRun.of(data)
        .assertOneLineError("offset 2 (at index byte 16) is 100, expected at least 500");
    Files.write(dir.resolve("shuffle_0_1_0.index"), new byte[12]);
    DumpRun.of(data).assertOneLineError("is not a Spark shuffle index: 12 bytes");
  }

  @Test
  void neitherFormatFailsInOneLine() throws IOException {
    Path file = dir.resolve("random.bin");
    byte[] bytes = new byte[5000];
    new Random(7).nextBytes(bytes);
    Files.write(file, bytes);
    DumpRun.of(file)
        .assertOneLineError(
            "random.bin is neither a shuffle file (no index beside it, no block header at offset 0)"
                + " nor a lz4 broadcast value: Cannot decode Arrow IPC stream");
    Path empty = dir.resolve("empty.bin");
    Files.write(empty, new byte[0]);
    DumpRun.of(empty).assertOneLineError("is empty");
    DumpRun.of(dir.resolve("missing.bin")).assertOneLineError("missing.bin: no such file");
  }

  @Test
  void usage() {
    DumpRun help = DumpRun.of("--help");
    assertEquals(0, help.status);
    assertTrue(help.out.startsWith("Usage: dev/dump [options] FILE..."), help::toString);
    for (Object[] args :
        new Object[][] {{}, {"--bogus", "x"}, {"--codec", "brotli", "x"}, {"--limit"}}) {
      DumpRun run = DumpRun.of(args);
      assertEquals(2, run.status, run::toString);
      assertTrue(run.err.endsWith("Try --help.\n"), run::toString);
    }
  }
}
