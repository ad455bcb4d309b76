package dev.quiver.codec;

import static dev.quiver.codec.SparkLz4Streams.compressible;
import static dev.quiver.codec.SparkLz4Streams.headers;
import static dev.quiver.codec.SparkLz4Streams.mixed;
import static dev.quiver.codec.SparkLz4Streams.readAll;
import static dev.quiver.codec.SparkLz4Streams.write;
import static dev.quiver.testing.Bytes.concat;
import static dev.quiver.testing.Bytes.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.io.ArrayInputStream;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.TrickleInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Quiver's reader of Spark's lz4 framing: it reads every stream lz4-java writes under Spark's codec
 * to the same bytes, and refuses every damaged one with an {@link Lz4FramingException} that names
 * the block, before allocating for a length the input does not back. Streams are read every {@link
 * Way}: from a plain input stream or from an array read in place, into arrays or into direct
 * buffers; every way must read the same bytes or fail with the same error.
 */
class SparkLz4InputStreamTest {

  private static final int KIB = 1024;
  private static final int MIB = 1024 * 1024;

  static Stream<Arguments> blockSizesAndData() {
    List<Arguments> cases = new ArrayList<>();
    for (int blockSize : new int[] {32 * KIB, 64 * KIB, MIB, 4 * MIB}) {
      // Two and a bit blocks: full blocks and a short last one.
      int length = 2 * blockSize + 4321;
      cases.add(Arguments.of(blockSize, "random", random(length, blockSize)));
      cases.add(Arguments.of(blockSize, "compressible", compressible(length, blockSize)));
      cases.add(Arguments.of(blockSize, "mixed", mixed(length, blockSize, blockSize)));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}-byte blocks, {1}")
  @MethodSource("blockSizesAndData")
  void readsWhatLz4JavaWritesToTheSameBytes(int blockSize, String kind, byte[] data)
      throws IOException {
    byte[] stream = write(data, blockSize);
    List<SparkLz4Streams.Header> headers = headers(stream);
    int expectedMethod = kind.equals("random") ? 0x10 : 0x20;
    for (SparkLz4Streams.Header header : headers.subList(0, headers.size() - 1)) {
      if (!kind.equals("mixed")) {
        assertEquals(expectedMethod, header.method(), kind + " block at " + header.offset);
      }
    }
    if (kind.equals("mixed")) {
      assertTrue(headers.stream().anyMatch(h -> !h.isEnd() && h.method() == 0x10), "a raw block");
      assertTrue(headers.stream().anyMatch(h -> h.method() == 0x20), "an lz4 block");
    }
    // 1-byte reads, reads smaller than a block, one byte short of one, a block, and far bigger.
    for (int readSize : new int[] {1, 1000, blockSize - 1, blockSize, 3 * blockSize}) {
      assertArrayEquals(data, readFully(stream, readSize), "reads of " + readSize);
      try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(stream))) {
        readAll(in, readSize);
        assertEquals(-1, in.read(), "after the end");
      }
    }
  }

  @Test
  void readsAStreamThatArrivesAByteAtATime() throws IOException {
    byte[] data = mixed(100 * KIB, 10 * KIB, 3);
    byte[] stream = write(data, 32 * KIB);
    try (InputStream in =
        new SparkLz4InputStream(new TrickleInputStream(new ByteArrayInputStream(stream)))) {
      assertArrayEquals(data, readAll(in, 64 * KIB));
    }
  }

  @Test
  void readsConcatenatedStreamsAsOne() throws IOException {
    byte[] a = compressible(70 * KIB, 1);
    byte[] b = random(5 * KIB, 2);
    byte[] c = mixed(2 * MIB + 1, 100 * KIB, 3);
    byte[] stream =
        concat(
            write(a, 32 * KIB),
            write(new byte[0], 64 * KIB),
            write(b, 64 * KIB),
            write(new byte[0], 32 * KIB),
            write(c, MIB),
            write(new byte[0], 4 * MIB));
    byte[] expected = concat(a, b, c);
    for (int readSize : new int[] {1, 777, 32 * KIB, 4 * MIB}) {
      assertArrayEquals(expected, readFully(stream, readSize), "reads of " + readSize);
    }
  }

  @Test
  void emptyStreamsAndZeroBytesReadAsNoData() throws IOException {
    for (byte[] stream :
        new byte[][] {
          new byte[0],
          write(new byte[0], 32 * KIB),
          concat(write(new byte[0], 32 * KIB), write(new byte[0], 4 * MIB))
        }) {
      try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(stream))) {
        assertEquals(-1, in.read());
        assertEquals(-1, in.read(new byte[10], 0, 10));
      }
    }
  }

  @Test
  void aZeroLengthReadReadsNothing() throws IOException {
    CountingInputStream counting =
        new CountingInputStream(new ByteArrayInputStream(write(random(10, 1), 32 * KIB)));
    try (InputStream in = new SparkLz4InputStream(counting)) {
      assertEquals(0, in.read(new byte[4], 2, 0));
      assertEquals(0, counting.counts().reads());
    }
  }

  @Test
  void readsInPiecesOfAtMost64KiBAndNeverCallsAvailable() throws IOException {
    byte[] data = random(9 * MIB, 5);
    CountingInputStream counting =
        new CountingInputStream(new ByteArrayInputStream(write(data, 4 * MIB)));
    try (InputStream in = new SparkLz4InputStream(counting)) {
      assertArrayEquals(data, readAll(in, 4 * MIB));
    }
    assertEquals(0, counting.counts().availableCalls());
    assertTrue(
        counting.counts().largestRequested() <= 64 * KIB,
        "largest read " + counting.counts().largestRequested());
  }

  @Test
  void aReadOfAWholeBlockDecompressesStraightIntoTheCallersArray() throws IOException {
    byte[] data = compressible(96 * KIB, 9);
    byte[] stream = write(data, 32 * KIB);
    byte[] target = new byte[data.length + 10];
    try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(stream))) {
      assertEquals(32 * KIB, in.read(target, 10, target.length - 10));
      // Nothing was buffered: the block went to the caller's array.
      assertEquals(0, in.available());
      assertEquals(32 * KIB, in.read(target, 10 + 32 * KIB, target.length - 10 - 32 * KIB));
    }
    assertArrayEquals(Arrays.copyOf(data, 64 * KIB), Arrays.copyOfRange(target, 10, 10 + 64 * KIB));
  }

  @Test
  void aReadOfAWholeBlockDecompressesStraightIntoTheCallersDirectBuffer() throws IOException {
    byte[] data = compressible(96 * KIB, 9);
    byte[] stream = write(data, 32 * KIB);
    for (boolean arrayInput : new boolean[] {false, true}) {
      ByteBuffer target = ByteBuffer.allocateDirect(data.length + 10);
      target.position(10);
      try (SparkLz4InputStream in = new SparkLz4InputStream(input(stream, arrayInput))) {
        assertEquals(32 * KIB, in.read(target));
        // Nothing was buffered: the block went to the caller's buffer.
        assertEquals(0, in.available());
        assertEquals(10 + 32 * KIB, target.position());
        target.limit(10 + 32 * KIB + 100);
        // Room for less than a block: the block is buffered and the read fills the room.
        assertEquals(100, in.read(target));
        assertEquals(32 * KIB - 100, in.available());
      }
      byte[] read = new byte[32 * KIB + 100];
      target.position(10);
      target.get(read);
      assertArrayEquals(Arrays.copyOf(data, read.length), read, "array input " + arrayInput);
    }
  }

  @Test
  void blocksOfAnArrayInputAreDecompressedInPlace() throws IOException {
    byte[] data = compressible(8 * MIB, 3);
    byte[] stream = write(data, 32 * KIB);
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuffer target =
          direct ? ByteBuffer.allocateDirect(data.length) : ByteBuffer.allocate(data.length);
      try (SparkLz4InputStream in = new SparkLz4InputStream(new ArrayInputStream(stream))) {
        long before = threadHeapAllocated();
        while (in.read(target) > 0) {
          // each read takes one block
        }
        long allocated = threadHeapAllocated() - before;
        // A buffer for the compressed bytes, as a plain input stream needs, would be 64 KiB.
        assertTrue(allocated < 16 * KIB, "allocated " + allocated + " bytes");
      }
      target.flip();
      byte[] read = new byte[target.remaining()];
      target.get(read);
      assertArrayEquals(data, read, "direct " + direct);
    }
  }

  @Test
  void wholeBlockReadsAllocateNoBlockBuffer() throws IOException {
    // Raw blocks go straight to the caller; lz4 blocks need only their compressed bytes (small
    // here: a repeated phrase).
    byte[] phrase = new byte[8 * MIB];
    for (int i = 0; i < phrase.length; i++) {
      phrase[i] = (byte) "a repeated phrase ".charAt(i % 18);
    }
    for (byte[] data : new byte[][] {random(8 * MIB, 1), phrase}) {
      byte[] stream = write(data, 4 * MIB);
      byte[] target = new byte[4 * MIB];
      try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(stream))) {
        long before = threadHeapAllocated();
        int total = 0;
        int n;
        while ((n = in.read(target, 0, target.length)) >= 0) {
          assertEquals(4 * MIB, n);
          assertArrayEquals(Arrays.copyOfRange(data, total, total + n), target);
          total += n;
          before += n + 64L; // what copyOfRange allocates for the comparison
        }
        assertEquals(data.length, total);
        long allocated = threadHeapAllocated() - before;
        // A block buffer would be 4 MiB.
        assertTrue(allocated < MIB, "allocated " + allocated + " bytes");
      }
    }
  }

  // lz4-java 1.11 (Spark 4.2's) deprecates this constructor, which Spark 3.4 to 4.1 read with.
  @SuppressWarnings("deprecation")
  @Test
  void readsMatchLz4JavasOwnReader() throws IOException {
    byte[] stream =
        concat(write(mixed(300 * KIB, 40 * KIB, 11), 64 * KIB), write(random(3, 4), 64));
    byte[] theirs;
    // Spark's own reader, on bytes lz4-java just wrote (its fast decompressor is safe only there).
    try (InputStream in =
        new LZ4BlockInputStream(
            new ByteArrayInputStream(stream),
            LZ4Factory.fastestInstance().fastDecompressor(),
            XXHashFactory.fastestInstance()
                .newStreamingHash32(SparkLz4InputStream.CHECKSUM_SEED)
                .asChecksum(),
            false)) {
      theirs = readAll(in, 8 * KIB);
    }
    try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(stream))) {
      assertArrayEquals(theirs, readAll(in, 8 * KIB));
    }
  }

  // ---- damaged input ----

  /** Two streams of small blocks, raw and lz4 ones: every header field occurs often. */
  private static byte[] smallStream() throws IOException {
    return concat(write(mixed(5000, 2048, 21), 1024), write(compressible(1500, 22), 1024));
  }

  private static byte[] smallStreamData() {
    return concat(mixed(5000, 2048, 21), compressible(1500, 22));
  }

  @Test
  void smallStreamHasRawAndLz4Blocks() throws IOException {
    List<SparkLz4Streams.Header> headers = headers(smallStream());
    assertTrue(headers.stream().anyMatch(h -> !h.isEnd() && h.method() == 0x10), "a raw block");
    assertTrue(headers.stream().anyMatch(h -> h.method() == 0x20), "an lz4 block");
    assertEquals(2, headers.stream().filter(SparkLz4Streams.Header::isEnd).count(), "end blocks");
  }

  @Test
  void truncationAtEveryOffsetIsReported() throws IOException {
    byte[] first = write(mixed(5000, 2048, 21), 1024);
    byte[] stream = smallStream();
    byte[] data = smallStreamData();
    for (int length = 1; length < stream.length; length++) {
      byte[] cut = Arrays.copyOf(stream, length);
      if (length == first.length) {
        // Right after the first stream's end block: a whole stream, nothing lost.
        assertArrayEquals(Arrays.copyOf(data, 5000), readFully(cut, 1000), "cut at " + length);
        continue;
      }
      for (int readSize : new int[] {1, 1000, 64 * KIB}) {
        Lz4FramingException e =
            assertThrows(
                Lz4FramingException.class, () -> readFully(cut, readSize), "cut at " + length);
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        assertTrue(e.getMessage().contains("block " + e.blockIndex() + " "), e.getMessage());
        assertTrue(e.getMessage().contains("offset " + e.blockOffset()), e.getMessage());
      }
    }
  }

  @Test
  void theErrorNamesTheBlockAndItsOffset() throws IOException {
    byte[] stream = smallStream();
    List<SparkLz4Streams.Header> headers = headers(stream);
    SparkLz4Streams.Header third = headers.get(2);
    byte[] damaged = stream.clone();
    damaged[third.offset + 17] ^= 1; // the checksum
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(damaged, 4096));
    assertEquals(2, e.blockIndex());
    assertEquals(third.offset, e.blockOffset());
    assertTrue(
        e.getMessage().startsWith("Corrupt Spark lz4 stream at block 2 (offset " + third.offset),
        e.getMessage());
    assertTrue(e.getMessage().contains("checksum"), e.getMessage());
  }

  @Test
  void flippedBytesAtEveryOffsetAreReportedOrHarmless() throws IOException {
    byte[] stream = smallStream();
    byte[] data = smallStreamData();
    boolean[] inHeader = new boolean[stream.length];
    boolean[] isToken = new boolean[stream.length];
    for (SparkLz4Streams.Header header : headers(stream)) {
      Arrays.fill(inHeader, header.offset, header.offset + SparkLz4InputStream.HEADER_LENGTH, true);
      isToken[header.offset + 8] = true;
    }
    for (int at = 0; at < stream.length; at++) {
      for (int mask : new int[] {0x01, 0x02, 0x10, 0x80, 0xff}) {
        byte[] damaged = stream.clone();
        damaged[at] ^= (byte) mask;
        String flip = "flip " + mask + " at " + at;
        int readSize = (at & 1) == 0 ? 64 * KIB : 100;
        try {
          // Harmless flips exist: a match offset moved by the data's period copies equal bytes.
          assertArrayEquals(data, readFully(damaged, readSize), flip + " read other bytes");
          // In a header only the token's level may change harmlessly: a bigger level still holds
          // the block.
          assertTrue(!inHeader[at] || (isToken[at] && (mask & 0xf0) == 0), flip + " went unseen");
        } catch (Lz4FramingException e) {
          assertTrue(e.getMessage().startsWith("Corrupt Spark lz4 stream at block "), flip);
        }
      }
    }
  }

  @Test
  void badMagicIsReported() throws IOException {
    byte[] stream = smallStream();
    byte[] damaged = stream.clone();
    damaged[3] = 'b';
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(damaged, 64));
    assertTrue(e.getMessage().contains("bad magic 4c5a3462"), e.getMessage());
    assertTrue(e.getMessage().contains("expected 4c5a34426c6f636b"), e.getMessage());
    assertEquals(0, e.blockIndex());
  }

  @ParameterizedTest
  @ValueSource(ints = {0x00, 0x30, 0x40, 0xf0, 0x05})
  void badTokenIsReported(int token) throws IOException {
    byte[] damaged = withHeader(smallStream(), 0, token, null, null, null);
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(damaged, 64));
    assertTrue(e.getMessage().contains(String.format("bad token 0x%02x", token)), e.getMessage());
  }

  @Test
  void checksumMismatchIsReportedForRawAndLz4Blocks() throws IOException {
    for (byte[] data : new byte[][] {random(3000, 1), compressible(3000, 1)}) {
      byte[] stream = write(data, 4 * KIB);
      int checksum = ByteBuffer.wrap(stream, 17, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      byte[] damaged = withHeader(stream, 0, null, null, null, checksum + 1);
      for (int readSize : new int[] {1, 4 * KIB}) {
        Lz4FramingException e =
            assertThrows(Lz4FramingException.class, () -> readFully(damaged, readSize));
        assertTrue(
            e.getMessage().contains(String.format("expected 0x%08x", checksum + 1)),
            e.getMessage());
      }
    }
  }

  @Test
  void aDataBlockInsteadOfTheEndBlockIsTruncation() throws IOException {
    byte[] stream = write(compressible(3000, 1), 1024);
    byte[] noEnd = Arrays.copyOf(stream, stream.length - SparkLz4InputStream.HEADER_LENGTH);
    Lz4FramingException e =
        assertThrows(Lz4FramingException.class, () -> readFully(noEnd, 64 * KIB));
    assertTrue(e.getMessage().contains("without the end block"), e.getMessage());
    assertEquals(noEnd.length, e.blockOffset());
  }

  @Test
  void anEndBlockWithAChecksumIsReported() throws IOException {
    byte[] stream = write(new byte[0], 1024);
    byte[] damaged = withHeader(stream, 0, null, null, null, 7);
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(damaged, 64));
    assertTrue(e.getMessage().contains("end block with checksum 0x00000007"), e.getMessage());
  }

  static Stream<Arguments> hostileLengths() {
    int lz4Level0 = 0x20; // lz4, blocks of up to 1 KiB
    int rawLevel0 = 0x10;
    int lz4Level15 = 0x2f; // lz4, blocks of up to 32 MiB
    return Stream.of(
        Arguments.of("negative decompressed", lz4Level0, 100, -1, "decompressed length -1"),
        Arguments.of(
            "decompressed over the level's block size",
            lz4Level0,
            100,
            1025,
            "decompressed length 1025, expected 0 to 1024"),
        Arguments.of(
            "decompressed at the int limit",
            lz4Level15,
            100,
            Integer.MAX_VALUE,
            "expected 0 to 33554432"),
        Arguments.of("negative compressed", lz4Level0, -5, 1000, "compressed length -5"),
        Arguments.of(
            "compressed at the int limit",
            lz4Level15,
            Integer.MAX_VALUE,
            1000,
            "expected at most 1019"),
        Arguments.of(
            "compressed over lz4's bound",
            lz4Level0,
            1024 + 1024 / 255 + 17,
            1024,
            "compressed length 1045, expected at most 1044"),
        Arguments.of(
            "raw block whose lengths differ",
            rawLevel0,
            1000,
            999,
            "raw block with compressed length 1000, expected its decompressed length 999"),
        Arguments.of(
            "empty compressed, some decompressed",
            lz4Level0,
            0,
            10,
            "compressed length 0 with decompressed length 10"),
        Arguments.of(
            "some compressed, empty decompressed",
            rawLevel0,
            10,
            0,
            "compressed length 10 with decompressed length 0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileLengths")
  void hostileLengthsAreRefusedBeforeAllocating(
      String name, int token, int compressedLength, int decompressedLength, String expected)
      throws IOException {
    byte[] stream = write(compressible(3000, 1), 1024);
    byte[] hostile = withHeader(stream, 0, token, compressedLength, decompressedLength, null);
    long before = threadHeapAllocated();
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(hostile, 1));
    long allocated = threadHeapAllocated() - before;
    assertTrue(e.getMessage().contains(expected), e.getMessage());
    assertEquals(0, e.blockIndex());
    assertEquals(0, e.blockOffset());
    assertTrue(allocated < 256 * KIB, name + ": allocated " + allocated + " bytes");
  }

  @ParameterizedTest
  @ValueSource(ints = {0x1f, 0x2f})
  void aBigClaimThatTheInputDoesNotBackAllocatesLittle(int token) throws IOException {
    // A 32 MiB block the header allows, but only a few bytes of it exist.
    int claimed = 32 * MIB;
    byte[] header = withHeader(write(new byte[0], 1024), 0, token, claimed, claimed, 0);
    byte[] hostile = concat(header, random(100, 1));
    long before = threadHeapAllocated();
    Lz4FramingException e = assertThrows(Lz4FramingException.class, () -> readFully(hostile, 1000));
    long allocated = threadHeapAllocated() - before;
    assertTrue(e.getMessage().contains("100 of " + claimed + " bytes"), e.getMessage());
    assertTrue(allocated < 512 * KIB, "allocated " + allocated + " bytes");
  }

  @Test
  void aDecompressedLengthThatDisagreesWithTheDataIsReported() throws IOException {
    byte[] stream = write(compressible(1000, 1), 1024);
    // The data decompresses to 1000 bytes; the header claims one more, then one fewer.
    byte[] longer = withHeader(stream, 0, null, null, 1001, null);
    byte[] shorter = withHeader(stream, 0, null, null, 999, null);
    for (int readSize : new int[] {1, 4096}) {
      Lz4FramingException e =
          assertThrows(Lz4FramingException.class, () -> readFully(longer, readSize));
      assertTrue(e.getMessage().contains("expected 1001"), e.getMessage());
      e = assertThrows(Lz4FramingException.class, () -> readFully(shorter, readSize));
      assertTrue(e.getMessage().contains("declared 999 bytes"), e.getMessage());
    }
  }

  @Test
  void afterAFailureTheStreamOnlyReportsIt() throws IOException {
    byte[] damaged = withHeader(smallStream(), 0, 0x00, null, null, null);
    try (InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(damaged))) {
      assertThrows(Lz4FramingException.class, in::read);
      IOException again = assertThrows(IOException.class, in::read);
      assertTrue(again.getMessage().contains("failed before"), again.getMessage());
    }
  }

  @Test
  void readingAfterCloseIsRefused() throws IOException {
    InputStream in = new SparkLz4InputStream(new ByteArrayInputStream(smallStream()));
    in.close();
    IOException e = assertThrows(IOException.class, in::read);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
  }

  /** The ways a stream is read: from what input, into what destination. */
  enum Way {
    STREAM_INTO_ARRAYS(false, false),
    STREAM_INTO_DIRECT_BUFFERS(false, true),
    ARRAY_INTO_ARRAYS(true, false),
    ARRAY_INTO_DIRECT_BUFFERS(true, true);

    final boolean arrayInput;
    final boolean direct;

    Way(boolean arrayInput, boolean direct) {
      this.arrayInput = arrayInput;
      this.direct = direct;
    }

    byte[] read(byte[] stream, int readSize) throws IOException {
      try (SparkLz4InputStream in = new SparkLz4InputStream(input(stream, arrayInput))) {
        if (!direct) {
          return readAll(in, readSize);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocateDirect(readSize);
        while (in.read(buffer) >= 0) {
          buffer.flip();
          byte[] piece = new byte[buffer.remaining()];
          buffer.get(piece);
          out.write(piece);
          buffer.clear();
        }
        return out.toByteArray();
      }
    }
  }

  private static InputStream input(byte[] stream, boolean arrayInput) {
    return arrayInput ? new ArrayInputStream(stream) : new ByteArrayInputStream(stream);
  }

  /**
   * {@code stream} read every {@link Way}, in reads of {@code readSize}: the bytes, which every way
   * must agree on, or the error, which every way must report alike.
   */
  private static byte[] readFully(byte[] stream, int readSize) throws IOException {
    byte[] first = null;
    Lz4FramingException firstError = null;
    for (Way way : Way.values()) {
      byte[] read = null;
      Lz4FramingException error = null;
      try {
        read = way.read(stream, readSize);
      } catch (Lz4FramingException e) {
        error = e;
      }
      if (way == Way.values()[0]) {
        first = read;
        firstError = error;
      } else if (firstError == null) {
        assertTrue(error == null, way + " failed where the others read: " + error);
        assertArrayEquals(first, read, way + " read other bytes");
      } else {
        assertTrue(error != null, way + " read what the others refused: " + firstError);
        assertEquals(firstError.getMessage(), error.getMessage(), way.toString());
        assertEquals(firstError.blockIndex(), error.blockIndex(), way.toString());
        assertEquals(firstError.blockOffset(), error.blockOffset(), way.toString());
      }
    }
    if (firstError != null) {
      throw firstError;
    }
    return first;
  }

  /** {@code stream} with the header at {@code offset} changed where a field is given. */
  private static byte[] withHeader(
      byte[] stream,
      int offset,
      Integer token,
      Integer compressedLength,
      Integer decompressedLength,
      Integer checksum) {
    byte[] out = stream.clone();
    ByteBuffer header = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
    if (token != null) {
      out[offset + 8] = (byte) (int) token;
    }
    if (compressedLength != null) {
      header.putInt(offset + 9, compressedLength);
    }
    if (decompressedLength != null) {
      header.putInt(offset + 13, decompressedLength);
    }
    if (checksum != null) {
      header.putInt(offset + 17, checksum);
    }
    return out;
  }

  private static long threadHeapAllocated() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    return threads.getThreadAllocatedBytes(Thread.currentThread().getId());
  }
}
