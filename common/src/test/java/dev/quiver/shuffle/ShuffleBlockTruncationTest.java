package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A stream cut at every byte offset: it ends cleanly only at a block boundary; anywhere else both
 * readers fail with an {@link EOFException} that names the block, after giving every block before
 * it.
 */
@ExtendWith(AllocatorExtension.class)
@org.junit.jupiter.api.Tag("bad-input")
class ShuffleBlockTruncationTest {

  static Stream<BlockCodec> codecs() {
    return Stream.of(BlockCodec.LZ4, BlockCodec.NONE);
  }

  @ParameterizedTest
  @MethodSource("codecs")
  void decoderEndsCleanlyOnlyAtBlockBoundaries(BlockCodec codec, BufferAllocator allocator)
      throws IOException {
    byte[] stream = twoBlocks(codec, allocator);
    List<Integer> starts = Blocks.boundaries(stream);
    for (int cut = 0; cut <= stream.length; cut++) {
      ByteArrayInputStream in = new ByteArrayInputStream(stream, 0, cut);
      int complete = completeBlocks(starts, cut);
      try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator)) {
        for (int b = 0; b < complete; b++) {
          assertTrue(decoder.next(), "cut " + cut + ", block " + b);
          assertEquals(b == 0 ? 3 : 2, decoder.root().getRowCount());
        }
        if (starts.contains(cut)) {
          assertFalse(decoder.next(), "cut " + cut + " is a block boundary");
        } else {
          assertNamesBlock(assertThrows(EOFException.class, decoder::next), complete, starts);
        }
      }
      assertEquals(0, allocator.getAllocatedMemory(), "cut " + cut);
    }
  }

  @ParameterizedTest
  @MethodSource("codecs")
  void rawBlockIteratorEndsCleanlyOnlyAtBlockBoundaries(BlockCodec codec, BufferAllocator allocator)
      throws IOException {
    byte[] stream;
    stream = twoBlocks(codec, allocator);
    List<Integer> starts = Blocks.boundaries(stream);
    for (int cut = 0; cut <= stream.length; cut++) {
      int complete = completeBlocks(starts, cut);
      try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream, 0, cut))) {
        for (int b = 0; b < complete; b++) {
          assertTrue(raw.next(), "cut " + cut + ", block " + b);
          assertEquals(starts.get(b + 1) - starts.get(b) - 20, raw.body().remaining());
        }
        if (starts.contains(cut)) {
          assertFalse(raw.next(), "cut " + cut + " is a block boundary");
        } else {
          assertNamesBlock(assertThrows(EOFException.class, raw::next), complete, starts);
        }
      }
    }
  }

  /** Blocks that end at or before {@code cut}. */
  private static int completeBlocks(List<Integer> starts, int cut) {
    int complete = 0;
    while (complete + 1 < starts.size() && starts.get(complete + 1) <= cut) {
      complete++;
    }
    return complete;
  }

  private static void assertNamesBlock(EOFException e, int block, List<Integer> starts) {
    String message = e.getMessage();
    assertTrue(
        message.contains(
            "inside block " + block + " (which starts at stream offset " + starts.get(block) + ")"),
        message);
    assertTrue(message.matches(".*needed \\d+ bytes, got \\d+.*"), message);
  }

  /** Two small blocks: 3 rows then 2, of a long, a long and a string. */
  private static byte[] twoBlocks(BlockCodec codec, BufferAllocator allocator) throws IOException {
    try (VectorSchemaRoot first = TestData.buildSide(allocator, 0, 3);
        VectorSchemaRoot second = TestData.buildSide(allocator, 100, 2)) {
      return Blocks.write(codec, first, second);
    }
  }
}
