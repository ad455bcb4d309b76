package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.CometFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The files Comet 1.2.0 wrote, damaged: cut at 50 random offsets and with 50 random bytes flipped
 * (fixed seeds). Each read either ends with Quiver's error, an {@link IOException} that names the
 * block or record batch being read, or gives exactly the rows of the undamaged file; never another
 * exception, never a leak, never a wild allocation (each test's allocator is bounded).
 *
 * <p>One exception, a property of the files and not of Quiver: Comet writes its LZ4 frames without
 * block or content checksums (frame flags 0x60), so a flipped byte of LZ4-compressed data can
 * decompress to different values that nothing can detect. There, the rows must still be readable,
 * and the test counts such flips.
 */
@org.junit.jupiter.api.Tag("bad-input")
class CometDamageTest {

  /** Damages per file and kind; {@code -Dquiver.damage.count=5000} explores further. */
  private static final int DAMAGES = Integer.getInteger("quiver.damage.count", 50);

  /** {@code -Dquiver.damage.seed=N} explores other damages. */
  private static final long SEED = Long.getLong("quiver.damage.seed", 0x5eed_0000L);

  private static final long TRUNCATION_SEED = SEED + 1;
  private static final long FLIP_SEED = SEED + 2;

  /** Bounded, so that a corrupt length or row count fails fast instead of allocating wildly. */
  @RegisterExtension
  static final AllocatorExtension ALLOCATOR = AllocatorExtension.withLimit(256L << 20);

  private static final String MAP = CometFiles.MAPS.get(0);

  /** One flipped bit: byte {@code at} XORed with {@code mask}. */
  private static final class Flip {
    final int at;
    final int mask;

    /** A flip at {@code at} of a bit {@code random} picks. */
    Flip(int at, Random random) {
      this.at = at;
      this.mask = 1 << random.nextInt(8);
    }

    /** A copy of {@code bytes} with this bit flipped. */
    byte[] of(byte[] bytes) {
      byte[] damaged = bytes.clone();
      damaged[at] ^= (byte) mask;
      return damaged;
    }

    @Override
    public String toString() {
      return "byte " + at + " ^ " + mask;
    }
  }

  /** The flips of the flip tests, the same on every run: one random bit at each random offset. */
  private static List<Flip> flips(int length) {
    Random random = new Random(FLIP_SEED);
    List<Flip> flips = new ArrayList<>();
    for (int at : offsets(random, length)) {
      flips.add(new Flip(at, random));
    }
    return flips;
  }

  /** How damaged reads ended. */
  private static final class Outcomes {
    int failed;
    int sameRows;
    int undetectable;

    @Override
    public String toString() {
      return failed
          + " failed, "
          + sameRows
          + " gave the same rows, "
          + undetectable
          + " gave different rows (undetectable)";
    }
  }

  // ---- broadcast-0.bin, Spark's lz4 codec, through ArrowIpc.decode

  @Test
  void broadcastTruncated(BufferAllocator allocator) throws IOException {
    byte[] bytes = Files.readAllBytes(CometFiles.broadcast());
    List<List<Object>> expected = readBroadcast(bytes, allocator);
    assertEquals(CometFiles.DIM_ROWS, expected.size());
    Outcomes outcomes = new Outcomes();
    for (int cut : offsets(new Random(TRUNCATION_SEED), bytes.length)) {
      String what = "broadcast-0.bin cut at " + cut + " of " + bytes.length;
      List<List<Object>> rows = readBroadcastDamaged(Arrays.copyOf(bytes, cut), allocator, what);
      assertEquals(0, allocator.getAllocatedMemory(), what + " leaked");
      if (rows == null) {
        outcomes.failed++;
      } else {
        // Only the end of Spark's lz4 stream (its empty end block) is past the IPC stream.
        assertEquals(expected, rows, what + " gave different rows");
        assertTrue(cut >= bytes.length - 21, what + " read without error");
        outcomes.sameRows++;
      }
    }
    System.out.println("broadcast-0.bin, truncated: " + outcomes);
    assertTrue(outcomes.failed > 0, outcomes.toString());
  }

  @Test
  void broadcastFlipped(BufferAllocator allocator) throws IOException {
    byte[] bytes = Files.readAllBytes(CometFiles.broadcast());
    List<List<Object>> expected = readBroadcast(bytes, allocator);
    Outcomes outcomes = new Outcomes();
    for (Flip flip : flips(bytes.length)) {
      byte[] damaged = flip.of(bytes);
      String what = "broadcast-0.bin " + flip;
      List<List<Object>> rows = readBroadcastDamaged(damaged, allocator, what);
      assertEquals(0, allocator.getAllocatedMemory(), what + " leaked");
      if (rows == null) {
        outcomes.failed++;
      } else {
        // Spark's lz4 blocks carry xxhash32 checksums: a flip that reads is one that changes
        // nothing the checksum covers, so the rows must be the same.
        assertEquals(expected, rows, what + " gave different rows");
        outcomes.sameRows++;
      }
    }
    System.out.println("broadcast-0.bin, flipped: " + outcomes);
    assertTrue(outcomes.failed > DAMAGES / 2, outcomes.toString());
  }

  private static List<List<Object>> readBroadcast(byte[] bytes, BufferAllocator allocator)
      throws IOException {
    List<List<Object>> rows = new ArrayList<>();
    try (DecodedStream decoded =
            ArrowIpc.decode(bytes, SparkStreamCodec.LZ4, allocator, "broadcast-0.bin");
        VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      for (ArrowRecordBatch batch : decoded.batches()) {
        new VectorLoader(root).load(batch);
        rows.addAll(Values.of(root));
      }
    }
    return rows;
  }

  /** The rows, or null when the read failed as it must: an IOException naming the batch. */
  private static List<List<Object>> readBroadcastDamaged(
      byte[] bytes, BufferAllocator allocator, String what) {
    try {
      return readBroadcast(bytes, allocator);
    } catch (IOException e) {
      assertNotNull(e.getMessage(), what);
      assertTrue(e.getMessage().contains("(broadcast-0.bin) at record batch "), what + ": " + e);
      return null;
    } catch (RuntimeException | Error e) {
      return fail(what + ": escaped as " + e, e);
    }
  }

  // ---- one map of the lz4 and snappy shuffle output, through both readers

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void shuffleTruncated(String codec, BufferAllocator allocator) throws IOException {
    CometTestFiles.MapOutput output = CometTestFiles.read(CometFiles.shuffleFolder(codec), MAP);
    byte[] data = output.data;
    List<List<List<Object>>> expected =
        readPartitions(data, output.offsets, allocator, codec, null, /* raw= */ false);
    assertEquals(
        expected, readPartitions(data, output.offsets, allocator, codec, null, /* raw= */ true));
    Baseline baseline = new Baseline(data, output.offsets, expected);
    TreeSet<Long> blockStarts = new TreeSet<>();
    for (long offset : output.offsets) {
      blockStarts.add(offset); // one block per partition in these files
    }
    Outcomes outcomes = new Outcomes();
    for (int cut : offsets(new Random(TRUNCATION_SEED), data.length)) {
      RowsCheck cutAtABoundary =
          (rows, what) -> {
            // Reading a partition's range of a cut file ends early; only at a block boundary can
            // no reader tell (Spark's index, not the blocks, says where a partition ends).
            assertTrue(blockStarts.contains((long) cut), what + " read without error");
            assertEquals(prefix(expected, output.offsets, cut), rows, what);
            outcomes.sameRows++;
          };
      String name = codec + " " + MAP + ".data cut at " + cut;
      byte[] damaged = Arrays.copyOf(data, cut);
      readBothPaths(damaged, name, baseline, allocator, codec, outcomes, cutAtABoundary);
    }
    System.out.println(codec + " shuffle, truncated: " + outcomes);
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void shuffleFlipped(String codec, BufferAllocator allocator) throws IOException {
    CometTestFiles.MapOutput output = CometTestFiles.read(CometFiles.shuffleFolder(codec), MAP);
    byte[] data = output.data;
    if (codec.equals("lz4")) {
      // Frame descriptor FLG after the 20-byte header and the 4-byte magic: version 01, independent
      // blocks, no block checksum, no content size, no content checksum.
      assertEquals(0x60, data[24] & 0xFF, "Comet's LZ4 frames carry no checksums");
    }
    List<List<List<Object>>> expected =
        readPartitions(data, output.offsets, allocator, codec, null, /* raw= */ false);
    Baseline baseline = new Baseline(data, output.offsets, expected);
    Outcomes outcomes = new Outcomes();
    for (Flip flip : flips(data.length)) {
      RowsCheck sameOrUndetectable =
          (rows, what) -> {
            if (rows.equals(expected)) {
              outcomes.sameRows++;
            } else {
              // Snappy's framing checksums every chunk (CRC32C): it must not get here.
              assertEquals("lz4", codec, what + " gave different rows");
              assertTrue(
                  insideLz4Data(flip.at, output.offsets), what + ": outside the compressed data");
              outcomes.undetectable++;
            }
          };
      String name = codec + " " + MAP + ".data " + flip;
      readBothPaths(flip.of(data), name, baseline, allocator, codec, outcomes, sameOrUndetectable);
    }
    System.out.println(codec + " shuffle, flipped: " + outcomes);
    assertTrue(outcomes.failed > 0, outcomes.toString());
  }

  /** Whether {@code at} lies past a block's header, LZ4 frame magic and descriptor. */
  private static boolean insideLz4Data(int at, long[] blockStarts) {
    for (int p = 0; p + 1 < blockStarts.length; p++) {
      if (at >= blockStarts[p] && at < blockStarts[p + 1]) {
        // 20-byte block header, 4-byte magic, 3-byte descriptor (FLG, BD, HC).
        return at >= blockStarts[p] + 27;
      }
    }
    return false;
  }

  /** What a test checks of rows a damaged read gave, {@code what} naming the read. */
  private interface RowsCheck {
    void check(List<List<List<Object>>> rows, String what);
  }

  /**
   * Reads {@code damaged} (named {@code name}) through the decoding and the direct-read path: each
   * read leaks nothing and either fails as it must (counted in {@code outcomes}) or gives rows that
   * {@code check} accepts and counts.
   */
  private static void readBothPaths(
      byte[] damaged,
      String name,
      Baseline baseline,
      BufferAllocator allocator,
      String codec,
      Outcomes outcomes,
      RowsCheck check) {
    for (boolean raw : new boolean[] {false, true}) {
      String what = name + (raw ? ", raw" : ", decoder");
      List<List<List<Object>>> rows = readDamaged(damaged, baseline, allocator, codec, raw, what);
      assertEquals(0, allocator.getAllocatedMemory(), what + " leaked");
      if (rows == null) {
        outcomes.failed++;
      } else {
        check.check(rows, what);
      }
    }
  }

  /**
   * Reads the partitions of a damaged file (the damaged ones; see {@link Baseline}), stopping at
   * the first failure.
   *
   * @return the rows of each partition, or null when the read failed as it must: an IOException
   *     naming the block
   */
  private static List<List<List<Object>>> readDamaged(
      byte[] data,
      Baseline baseline,
      BufferAllocator allocator,
      String codec,
      boolean raw,
      String what) {
    try {
      return readPartitions(data, baseline.offsets, allocator, codec, baseline, raw);
    } catch (IOException e) {
      assertNotNull(e.getMessage(), what);
      assertTrue(e.getMessage().contains("block "), what + ": " + e);
      assertTrue(e.getMessage().contains(codec + " partition "), what + ": " + e);
      return null;
    } catch (RuntimeException | Error e) {
      return fail(what + ": escaped as " + e, e);
    }
  }

  /**
   * The undamaged file and its rows. A damaged read takes the rows of a partition whose bytes are
   * undamaged from here instead of reading it again: the readers are deterministic, every damage
   * here touches one partition (one block each), and reading every partition of every damaged file
   * would make this test slow for nothing (very slow on Arrow 11, whose allocator records a stack
   * trace for every buffer while assertions are enabled).
   */
  private static final class Baseline {
    final byte[] data;
    final long[] offsets;
    final List<List<List<Object>>> rows;

    Baseline(byte[] data, long[] offsets, List<List<List<Object>>> rows) {
      this.data = data;
      this.offsets = offsets;
      this.rows = rows;
    }

    /** The undamaged rows of partition {@code p} if {@code bytes} are its bytes, else null. */
    List<List<Object>> rowsIfUndamaged(int p, byte[] bytes) {
      return Arrays.equals(bytes, partition(data, offsets, p)) ? rows.get(p) : null;
    }
  }

  /** The bytes of partition {@code p} that the (maybe cut) file holds. */
  private static byte[] partition(byte[] data, long[] offsets, int p) {
    int start = (int) Math.min(offsets[p], data.length);
    int end = (int) Math.min(offsets[p + 1], data.length);
    return Arrays.copyOfRange(data, start, end);
  }

  /**
   * Every partition's rows, read by the direct-read path ({@code raw}: each body decoded as a
   * native engine would, here with Quiver's own decode of the block's codec) or the decoding path,
   * or taken from {@code baseline} (when given) for a partition whose bytes are undamaged.
   */
  private static List<List<List<Object>>> readPartitions(
      byte[] data,
      long[] offsets,
      BufferAllocator allocator,
      String codec,
      Baseline baseline,
      boolean raw)
      throws IOException {
    List<List<List<Object>>> partitions = new ArrayList<>();
    for (int p = 0; p + 1 < offsets.length; p++) {
      byte[] bytes = partition(data, offsets, p);
      List<List<Object>> undamaged = baseline == null ? null : baseline.rowsIfUndamaged(p, bytes);
      String source = codec + " partition " + p;
      partitions.add(
          undamaged != null
              ? undamaged
              : raw ? rawRows(bytes, source, allocator) : decoderRows(bytes, source, allocator));
    }
    return partitions;
  }

  private static List<List<Object>> decoderRows(
      byte[] bytes, String source, BufferAllocator allocator) throws IOException {
    List<List<Object>> rows = new ArrayList<>();
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(
            new ByteArrayInputStream(bytes),
            allocator,
            null,
            ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
            source)) {
      while (decoder.next()) {
        rows.addAll(Values.of(decoder.root()));
      }
    }
    return rows;
  }

  private static List<List<Object>> rawRows(byte[] bytes, String source, BufferAllocator allocator)
      throws IOException {
    List<List<Object>> rows = new ArrayList<>();
    try (RawBlockIterator blocks =
        new RawBlockIterator(
            new ByteArrayInputStream(bytes),
            null,
            ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
            source)) {
      while (blocks.next()) {
        ByteBuffer body = blocks.body();
        byte[] copy = new byte[body.remaining()];
        body.get(copy);
        String block = source + " block " + blocks.blockIndex() + " at " + blocks.blockOffset();
        try (DecodedStream decoded = ArrowIpc.decode(copy, blocks.codec(), allocator, block);
            VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
          if (decoded.schema().getFields().size() != blocks.fieldCount()
              || decoded.batches().size() != 1) {
            // What an engine checks once it has the body's schema.
            throw new IOException(
                block + ": the header's field count or the batch count does not match the body");
          }
          new VectorLoader(root).load(decoded.batches().get(0));
          rows.addAll(Values.of(root));
        }
      }
    }
    return rows;
  }

  /** The rows of the blocks that lie wholly before {@code cut}. */
  private static List<List<List<Object>>> prefix(
      List<List<List<Object>>> partitions, long[] offsets, int cut) {
    List<List<List<Object>>> kept = new ArrayList<>();
    for (int p = 0; p < partitions.size(); p++) {
      kept.add(offsets[p + 1] <= cut ? partitions.get(p) : new ArrayList<>());
    }
    return kept;
  }

  /** {@link #DAMAGES} distinct offsets in {@code [0, length)}, in increasing order. */
  private static List<Integer> offsets(Random random, int length) {
    TreeSet<Integer> offsets = new TreeSet<>();
    while (offsets.size() < Math.min(DAMAGES, length)) {
      offsets.add(random.nextInt(length));
    }
    return new ArrayList<>(offsets);
  }
}
