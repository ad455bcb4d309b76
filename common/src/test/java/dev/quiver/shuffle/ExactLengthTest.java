package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A segment of known length is consumed exactly: cut at a block boundary it fails instead of
 * reading as fewer blocks, and a longer one fails too, under the block readers and under Spark's
 * lz4 framing alike.
 */
@ExtendWith(AllocatorExtension.class)
class ExactLengthTest {

  private static final String SEGMENT = "shuffle 4 map 9 reduce partition 2";

  @Test
  void aSegmentCutAtABlockBoundaryFailsWithTheTruncationError(BufferAllocator allocator)
      throws IOException {
    byte[] stream = twoBlocks(allocator, BlockCodec.NONE);
    int boundary = Blocks.boundaries(stream).get(1);
    byte[] cut = Arrays.copyOf(stream, boundary);

    // Without the length the cut is invisible: one block, then a clean end.
    try (ShuffleBlockDecoder blind =
        new ShuffleBlockDecoder(new ByteArrayInputStream(cut), allocator)) {
      assertTrue(blind.next());
      assertFalse(blind.next());
    }

    EOFException cutShort =
        secondBlockFails(EOFException.class, exact(cut, stream.length), allocator);
    assertEquals(
        "Shuffle 4 map 9 reduce partition 2 ended after "
            + boundary
            + " of its "
            + stream.length
            + " bytes ("
            + (stream.length - boundary)
            + " missing)",
        cutShort.getMessage());
    try (RawBlockIterator raw = new RawBlockIterator(exact(cut, stream.length))) {
      assertTrue(raw.next());
      EOFException e = assertThrows(EOFException.class, raw::next);
      assertTrue(e.getMessage().contains("ended after " + boundary + " of its"), e.getMessage());
    }
  }

  @Test
  void aSegmentOfExactlyItsLengthReadsToTheEnd(BufferAllocator allocator) throws IOException {
    byte[] stream = twoBlocks(allocator, BlockCodec.LZ4);
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(exact(stream, stream.length), allocator)) {
      assertTrue(decoder.next());
      assertTrue(decoder.next());
      assertFalse(decoder.next());
    }
  }

  @Test
  void aSegmentLongerThanItsLengthIsCorrupt(BufferAllocator allocator) throws IOException {
    byte[] stream = twoBlocks(allocator, BlockCodec.NONE);
    int boundary = Blocks.boundaries(stream).get(1);
    ShuffleCorruptionException e =
        secondBlockFails(ShuffleCorruptionException.class, exact(stream, boundary), allocator);
    assertEquals(
        "Shuffle 4 map 9 reduce partition 2 holds more than its expected "
            + boundary
            + " bytes: the stream goes on past byte "
            + boundary,
        e.getMessage());
  }

  /**
   * Spark's order: the length is checked on the raw segment, under the codec. A segment of two
   * Spark-lz4 streams (as Spark's shuffle concatenates them) cut between them decompresses to a
   * clean end at a block boundary; the length check sees the cut.
   */
  @Test
  void theCheckSitsUnderSparksCodec(BufferAllocator allocator) throws IOException {
    byte[] plain = twoBlocks(allocator, BlockCodec.NONE);
    int boundary = Blocks.boundaries(plain).get(1);
    byte[] first = sparkLz4(Arrays.copyOfRange(plain, 0, boundary));
    byte[] second = sparkLz4(Arrays.copyOfRange(plain, boundary, plain.length));
    int length = first.length + second.length;

    InputStream blind = SparkStreamCodec.LZ4.decompress(new ByteArrayInputStream(first));
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(blind, allocator)) {
      assertTrue(decoder.next());
      assertFalse(decoder.next(), "without the length, the cut reads as a clean end");
    }

    InputStream checked = SparkStreamCodec.LZ4.decompress(exact(first, length));
    EOFException e = secondBlockFails(EOFException.class, checked, allocator);
    assertTrue(
        e.getMessage().contains("ended after " + first.length + " of its " + length + " bytes"),
        e.getMessage());
  }

  @Test
  void argumentsAreChecked() {
    InputStream empty = new ByteArrayInputStream(new byte[0]);
    assertThrows(IllegalArgumentException.class, () -> new ExactLengthInputStream(empty, -1, "x"));
    assertThrows(NullPointerException.class, () -> new ExactLengthInputStream(empty, 0, null));
  }

  /** What a decoder over {@code in} throws reading its second block, having read the first. */
  private static <T extends Throwable> T secondBlockFails(
      Class<T> failure, InputStream in, BufferAllocator allocator) throws IOException {
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator)) {
      assertTrue(decoder.next());
      return assertThrows(failure, decoder::next);
    }
  }

  private static InputStream exact(byte[] bytes, long expected) {
    return new ExactLengthInputStream(new ByteArrayInputStream(bytes), expected, SEGMENT);
  }

  private static byte[] sparkLz4(byte[] bytes) throws IOException {
    return Codecs.compress(SparkStreamCodec.LZ4, bytes);
  }

  private static byte[] twoBlocks(BufferAllocator allocator, BlockCodec codec) throws IOException {
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 3);
        VectorSchemaRoot b = TestData.buildSide(allocator, 3, 2)) {
      return Blocks.write(codec, a, b);
    }
  }
}
