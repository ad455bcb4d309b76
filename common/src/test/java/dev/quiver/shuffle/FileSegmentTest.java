package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.io.PiecewiseReads;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Bytes;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.TestData;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map output's segment read from its data file by Quiver: exactly its bytes (not its
 * neighbours'), a direct body buffer filled by the file read itself in one read per body, and a
 * file that ends inside the segment named with where, also when it ends at a block boundary (which
 * a stream that simply ends would read as fewer blocks) and under Spark's codec.
 */
@ExtendWith(AllocatorExtension.class)
class FileSegmentTest {

  private static final String SEGMENT = "shuffle 1 map 2 reduce partition 3";

  /** Larger than a piece, so a staged read could not take it in one call. */
  private static final int BODY = 3 * PiecewiseReads.PIECE_SIZE + 17;

  @TempDir Path dir;

  @Test
  void rawBodiesReachTheDirectBufferInOneReadEachAndOnlyTheSegmentIsRead() throws IOException {
    byte[] first = Bytes.random(BODY, 1);
    byte[] second = Bytes.random(BODY / 2, 2);
    byte[] segment =
        Bytes.concat(
            Blocks.block(2, BlockCodec.LZ4, first), Blocks.block(2, BlockCodec.LZ4, second));
    // The neighbours are blocks too: a read past either end would show as a third block.
    byte[] before = Blocks.block(2, BlockCodec.NONE, Bytes.random(100, 3));
    Path data = file(Bytes.concat(before, segment, before));

    CountingInputStream counted = new CountingInputStream(open(data, before.length, segment));
    try (RawBlockIterator raw = new RawBlockIterator(counted)) {
      assertTrue(raw.next());
      assertBody(first, raw.body());
      assertTrue(raw.next());
      assertBody(second, raw.body());
      assertFalse(raw.next());
    }
    // Each body in one read of its whole length: nothing was staged through a heap piece.
    assertEquals(BODY, counted.counts().largestRequested());
    assertEquals(BODY, counted.counts().largestReturned());
    assertTrue(counted.isClosed());
  }

  @Test
  void theDecoderReadsASegmentThroughHeapPieces(BufferAllocator allocator) throws IOException {
    byte[] segment;
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 3000);
        VectorSchemaRoot b = TestData.buildSide(allocator, 3000, 5)) {
      segment = Blocks.write(BlockCodec.ZSTD, a, b);
    }
    byte[] junk = Bytes.random(31, 4);
    Path data = file(Bytes.concat(junk, segment, junk));
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(open(data, junk.length, segment), allocator)) {
      assertTrue(decoder.next());
      assertEquals(3000, decoder.root().getRowCount());
      assertTrue(decoder.next());
      assertEquals(5, decoder.root().getRowCount());
      assertFalse(decoder.next());
    }
  }

  @Test
  void heapReadsSkipsAndAvailableStayInsideTheSegment() throws IOException {
    byte[] bytes = Bytes.random(1000, 5);
    Path data = file(bytes);
    try (FileSegmentInputStream in = FileSegmentInputStream.open(data, 100, 500, SEGMENT, null)) {
      assertEquals(500, in.available());
      assertEquals(bytes[100] & 0xFF, in.read());
      assertEquals(9, in.skip(9));
      byte[] rest = new byte[1000];
      int n = PiecewiseReads.readFully(in, rest, 0, rest.length);
      assertArrayEquals(Arrays.copyOfRange(bytes, 110, 600), Arrays.copyOf(rest, n));
      assertEquals(-1, in.read());
      assertEquals(-1, in.read(ByteBuffer.allocateDirect(8)));
      assertEquals(0, in.skip(1));
    }
  }

  @Test
  void aFileEndingInsideTheSegmentIsAnEofNamingFileAndOffsets() throws IOException {
    Path data = file(Bytes.random(1000, 6));
    try (FileSegmentInputStream in = FileSegmentInputStream.open(data, 200, 700, SEGMENT, null)) {
      try (FileChannel truncating = FileChannel.open(data, StandardOpenOption.WRITE)) {
        truncating.truncate(600);
      }
      ByteBuffer dst = ByteBuffer.allocateDirect(700);
      EOFException e = assertThrows(EOFException.class, () -> PiecewiseReads.readFully(in, dst));
      assertEquals(400, dst.position());
      assertEquals(
          data
              + " ended at byte 600, inside "
              + SEGMENT
              + " (file bytes 200 to 900): 400 of its 700 bytes read",
          e.getMessage());
    }
  }

  @Test
  void aFileCutAtABlockBoundaryFailsTheNextBlockInsteadOfEndingCleanly(BufferAllocator allocator)
      throws IOException {
    byte[] segment = twoBlocks(allocator, BlockCodec.NONE);
    int boundary = Blocks.boundaries(segment).get(1);
    Path cut = file(Arrays.copyOf(segment, boundary));
    String ended = cut + " ended at byte " + boundary + ", inside " + SEGMENT;

    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(open(cut, 0, segment), allocator)) {
      assertTrue(decoder.next());
      EOFException e = assertThrows(EOFException.class, decoder::next);
      assertTrue(e.getMessage().startsWith(ended), e.getMessage());
    }
    try (RawBlockIterator raw = new RawBlockIterator(open(cut, 0, segment))) {
      assertTrue(raw.next());
      EOFException e = assertThrows(EOFException.class, raw::next);
      assertTrue(e.getMessage().startsWith(ended), e.getMessage());
    }
  }

  /**
   * Spark's order: the segment is the raw bytes, under the codec. A segment of two Spark-lz4
   * streams (as Spark's shuffle concatenates them) cut between them decompresses to a clean end at
   * a block boundary; the segment's bounds see the cut.
   */
  @Test
  void theBoundsHoldUnderSparksCodec(BufferAllocator allocator) throws IOException {
    byte[] plain = twoBlocks(allocator, BlockCodec.NONE);
    int boundary = Blocks.boundaries(plain).get(1);
    byte[] first = Codecs.compress(SparkStreamCodec.LZ4, Arrays.copyOfRange(plain, 0, boundary));
    byte[] second =
        Codecs.compress(SparkStreamCodec.LZ4, Arrays.copyOfRange(plain, boundary, plain.length));
    Path cut = file(first);

    InputStream blind = SparkStreamCodec.LZ4.decompress(Files.newInputStream(cut));
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(blind, allocator)) {
      assertTrue(decoder.next());
      assertFalse(decoder.next(), "without the bounds, the cut reads as a clean end");
    }

    byte[] whole = Bytes.concat(first, second);
    InputStream bounded = SparkStreamCodec.LZ4.decompress(open(cut, 0, whole));
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(bounded, allocator)) {
      assertTrue(decoder.next());
      EOFException e = assertThrows(EOFException.class, decoder::next);
      assertTrue(
          e.getMessage().contains(cut + " ended at byte " + first.length + ", inside " + SEGMENT),
          e.getMessage());
    }
  }

  @Test
  void closingClosesTheStreamItReplaces() throws IOException {
    AtomicBoolean closed = new AtomicBoolean();
    InputStream in =
        FileSegmentInputStream.open(file(new byte[4]), 0, 4, SEGMENT, () -> closed.set(true));
    assertFalse(closed.get());
    in.close();
    assertTrue(closed.get());
  }

  @Test
  void argumentsAreChecked() throws IOException {
    Path data = file(new byte[4]);
    assertThrows(
        IllegalArgumentException.class,
        () -> FileSegmentInputStream.open(data, -1, 1, SEGMENT, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> FileSegmentInputStream.open(data, 0, -1, SEGMENT, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> FileSegmentInputStream.open(data, 2, Long.MAX_VALUE, SEGMENT, null));
  }

  private Path file(byte[] bytes) throws IOException {
    return Files.write(Files.createTempFile(dir, "shuffle", ".data"), bytes);
  }

  /** As the Spark side opens a local segment: read by Quiver from the data file. */
  private static InputStream open(Path data, int start, byte[] segment) throws IOException {
    return FileSegmentInputStream.open(data, start, segment.length, SEGMENT, null);
  }

  private static byte[] twoBlocks(BufferAllocator allocator, BlockCodec codec) throws IOException {
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 3);
        VectorSchemaRoot b = TestData.buildSide(allocator, 3, 2)) {
      return Blocks.write(codec, a, b);
    }
  }

  private static void assertBody(byte[] expected, ByteBuffer body) {
    assertTrue(body.isDirect());
    byte[] actual = new byte[body.remaining()];
    body.duplicate().get(actual);
    assertArrayEquals(expected, actual);
  }
}
