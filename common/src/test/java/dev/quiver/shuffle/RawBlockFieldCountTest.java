package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Bytes;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The raw-block path refuses a block whose declared field count differs from the stream's first
 * block or from the schema the caller expects, as the decoding path does: a native engine decodes
 * every body against one schema.
 */
@ExtendWith(AllocatorExtension.class)
class RawBlockFieldCountTest {

  @Test
  void aBlockOfAnotherShapeThanTheFirstIsCorrupt(BufferAllocator allocator) throws IOException {
    byte[] stream = mixedShapes(allocator);
    List<Integer> starts = Blocks.boundaries(stream);
    int first = buildSideFields();
    int second = allTypesFields();
    try (RawBlockIterator raw =
        new RawBlockIterator(new ByteArrayInputStream(stream), null, 1 << 20, "map 2 reduce 7")) {
      assertTrue(raw.next());
      assertEquals(first, raw.fieldCount());
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, raw::next);
      assertEquals(1, e.blockIndex());
      assertEquals((long) starts.get(1), e.blockOffset());
      assertEquals(
          "Corrupt shuffle block 1 at stream offset "
              + starts.get(1)
              + " (map 2 reduce 7): the header declares "
              + second
              + " fields, expected "
              + first
              + " (as the stream's first block declares)",
          e.getMessage());
      assertThrows(IllegalStateException.class, raw::next, "the position is lost");
    }
  }

  @Test
  void theCallersExpectedCountIsCheckedFromTheFirstBlock(BufferAllocator allocator)
      throws IOException {
    byte[] stream = mixedShapes(allocator);
    int first = buildSideFields();
    try (RawBlockIterator raw = expectingFields(stream, first + 1)) {
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, raw::next);
      assertEquals(0, e.blockIndex());
      assertEquals(0, e.blockOffset());
      assertTrue(
          e.getMessage()
              .endsWith(
                  "the header declares "
                      + first
                      + " fields, expected "
                      + (first + 1)
                      + " (the schema the reader expects)"),
          e.getMessage());
    }
  }

  @Test
  void blocksOfTheExpectedShapeAreRead(BufferAllocator allocator) throws IOException {
    byte[] stream;
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 3);
        VectorSchemaRoot b = TestData.buildSide(allocator, 3, 2)) {
      stream = Blocks.write(BlockCodec.LZ4, a, b);
    }
    try (RawBlockIterator raw = expectingFields(stream, buildSideFields())) {
      assertTrue(raw.next());
      assertTrue(raw.next());
      assertEquals(false, raw.next());
    }
  }

  @Test
  void aNegativeExpectedCountIsRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new RawBlockIterator(new ByteArrayInputStream(new byte[0]), null, 100, null, -2));
  }

  /** A raw iterator over {@code stream} for a reader that expects {@code fields} fields. */
  private static RawBlockIterator expectingFields(byte[] stream, int fields) {
    return new RawBlockIterator(
        new ByteArrayInputStream(stream),
        null,
        ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
        null,
        fields);
  }

  /** A build-side block, then an all-types block: two shapes in one stream. */
  private static byte[] mixedShapes(BufferAllocator allocator) throws IOException {
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 3);
        VectorSchemaRoot b = TestData.allTypes(allocator, 4, 1)) {
      return Bytes.concat(Blocks.write(BlockCodec.NONE, a), Blocks.write(BlockCodec.NONE, b));
    }
  }

  private static int buildSideFields() {
    return TestData.buildSideSchema().getFields().size();
  }

  private static int allTypesFields() {
    int n = TestData.allTypesSchema().getFields().size();
    if (n == buildSideFields()) {
      throw new AssertionError("the test needs two schemas of different widths");
    }
    return n;
  }
}
