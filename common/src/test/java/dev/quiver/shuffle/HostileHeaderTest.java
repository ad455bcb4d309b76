package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Bytes;
import dev.quiver.testing.MemoryProbe;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Headers no valid block has: both readers reject them as corruption that names the block and its
 * offset, before allocating anything for the block.
 */
@ExtendWith(AllocatorExtension.class)
@org.junit.jupiter.api.Tag("bad-input")
class HostileHeaderTest {

  private static final long MAX = 4096;
  private static final long ONE_MIB = 1 << 20;

  @ParameterizedTest
  @ValueSource(longs = {-1, Long.MIN_VALUE, 1L << 62, 0, 5, 11, MAX + 1})
  void impossibleLengthIsRejectedBeforeAllocating(long length, BufferAllocator allocator)
      throws IOException {
    byte[] good = goodBlock(allocator);
    byte[] stream =
        Bytes.concat(good, Blocks.header(length, 17, BlockCodec.NONE.tag()), new byte[64]);

    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(
            new ByteArrayInputStream(stream), allocator, null, MAX, "map 3 partition 5")) {
      assertTrue(decoder.next());
      long heapBefore = MemoryProbe.threadHeapAllocated();
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, decoder::next);
      assertSmallHeapAllocation(heapBefore, ONE_MIB);
      assertEquals(0, allocator.getAllocatedMemory(), "nothing allocated for the block");
      assertRejectsLength(e, length, good.length);
      assertTrue(e.getMessage().contains("(map 3 partition 5)"), e.getMessage());
    }

    try (RawBlockIterator raw =
        new RawBlockIterator(new ByteArrayInputStream(stream), null, MAX, null)) {
      assertTrue(raw.next());
      long directBefore = MemoryProbe.directBufferCapacity();
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, raw::next);
      // The JVM-wide total: it may shrink meanwhile (the cleaner frees another test's buffers).
      long directAfter = MemoryProbe.directBufferCapacity();
      assertTrue(
          directAfter <= directBefore,
          "no direct buffer grown: " + directBefore + " -> " + directAfter + " bytes");
      assertRejectsLength(e, length, good.length);
    }
  }

  /**
   * A length under the maximum on a stream that holds far less: the read buffer grows as bytes
   * arrive, so the lie costs a few MiB at most, then an EOF that names the block.
   */
  @Test
  void lengthBeyondTheStreamIsNotAllocatedUpFront(BufferAllocator allocator) throws IOException {
    long claimed = 1L << 30;
    byte[] stream = Bytes.concat(Blocks.header(claimed, 3, BlockCodec.NONE.tag()), new byte[100]);
    String expected = "needed " + (claimed - ShuffleBlockFormat.HEADER_BYTES) + " bytes, got 100";
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(stream), allocator)) {
      long heapBefore = MemoryProbe.threadHeapAllocated();
      EOFException e = assertThrows(EOFException.class, decoder::next);
      assertSmallHeapAllocation(heapBefore, 2 * BodyBuffer.TRUSTED_LENGTH);
      assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
    try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream))) {
      long directBefore = MemoryProbe.directBufferCapacity();
      EOFException e = assertThrows(EOFException.class, raw::next);
      long grown = MemoryProbe.directBufferCapacity() - directBefore;
      assertTrue(grown <= BodyBuffer.TRUSTED_LENGTH, "direct buffers grew by " + grown);
      assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
  }

  @Test
  void unknownTagIsRejectedNamingIt(BufferAllocator allocator) throws IOException {
    byte[] tag = "LZ5_".getBytes(StandardCharsets.US_ASCII);
    assertBothReject(
        Bytes.concat(Blocks.header(100, 3, tag), new byte[88]),
        "\"LZ5_\" (hex 4C 5A 35 5F)",
        allocator);
  }

  @Test
  void cometOffsetsAsLengthsTagIsRejectedNamingTheSetting(BufferAllocator allocator)
      throws IOException {
    byte[] tag = {(byte) 0xDA, 'S', 'T', 'D'};
    String message =
        assertBothReject(
            Bytes.concat(Blocks.header(100, 3, tag), new byte[88]),
            "\"\\xDASTD\" (hex DA 53 54 44)",
            allocator);
    assertTrue(message.contains(BlockCodec.COMET_OFFSETS_AS_LENGTHS_SETTING + "=false"), message);
  }

  @ParameterizedTest
  @ValueSource(longs = {-1, 1L << 40, Integer.MAX_VALUE + 1L})
  void impossibleFieldCountIsRejected(long fieldCount, BufferAllocator allocator)
      throws IOException {
    assertBothReject(
        Bytes.concat(Blocks.header(100, fieldCount, BlockCodec.NONE.tag()), new byte[88]),
        "field count " + Long.toUnsignedString(fieldCount) + " is not a possible number",
        allocator);
  }

  /** Both readers reject {@code stream}'s first block with a message holding {@code expected}. */
  private static String assertBothReject(byte[] stream, String expected, BufferAllocator allocator)
      throws IOException {
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(stream), allocator)) {
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, decoder::next);
      assertTrue(e.getMessage().contains(expected), e.getMessage());
      assertTrue(e.getMessage().startsWith("Corrupt shuffle block 0 at stream offset 0"));
    }
    try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream))) {
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, raw::next);
      assertTrue(e.getMessage().contains(expected), e.getMessage());
      assertEquals(0, e.blockIndex());
      assertEquals(0, e.blockOffset());
      return e.getMessage();
    }
  }

  private static void assertRejectsLength(ShuffleCorruptionException e, long length, int offset) {
    String message = e.getMessage();
    assertEquals(1, e.blockIndex());
    assertEquals(offset, e.blockOffset());
    assertTrue(message.contains("block 1 at stream offset " + offset), message);
    if (length < 0) {
      assertTrue(message.contains("is negative as a signed 64-bit number"), message);
    } else if (length < ShuffleBlockFormat.HEADER_BYTES) {
      assertTrue(message.contains("length " + length + " is shorter than the 12-byte"), message);
    } else {
      assertTrue(message.contains("exceeds the maximum block length " + MAX), message);
    }
  }

  private static void assertSmallHeapAllocation(long before, long limit) {
    if (before < 0) {
      return; // this JVM cannot tell
    }
    long allocated = MemoryProbe.threadHeapAllocated() - before;
    assertTrue(allocated < limit, "allocated " + allocated + " heap bytes");
  }

  private static byte[] goodBlock(BufferAllocator allocator) throws IOException {
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0, 4)) {
      return Blocks.write(BlockCodec.NONE, root);
    }
  }
}
