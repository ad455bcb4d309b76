package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every byte of a small block flipped in turn: the decoder either fails with an {@link IOException}
 * that says where, or gives batches whose values can be read; never another exception, never a
 * leak. A flip in the 20-byte header always fails.
 */
@org.junit.jupiter.api.Tag("bad-input")
class FlippedBytesTest {

  private static final int HEADER = 20;
  private static final int[] MASKS = {0x01, 0xFF};

  /**
   * Bounded as an engine bounds a task's allocator. A flipped row count makes Arrow size vectors
   * for it while loading, before anything can check it; the limit turns that into a quick failure.
   */
  @RegisterExtension
  static final AllocatorExtension ALLOCATOR = AllocatorExtension.withLimit(16 << 20);

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#blockCodecs")
  void decoderFailsCleanlyOrDecodesForEveryFlippedByte(BlockCodec codec, BufferAllocator allocator)
      throws IOException {
    byte[] block = oneBlock(codec, allocator);
    int failures = 0;
    for (int i = 0; i < block.length; i++) {
      for (int mask : masksFor(i)) {
        byte[] flipped = block.clone();
        flipped[i] ^= (byte) mask;
        String what = codec + " block, byte " + i + " ^ " + mask;
        try (ShuffleBlockDecoder decoder =
            new ShuffleBlockDecoder(new ByteArrayInputStream(flipped), allocator)) {
          while (decoder.next()) {
            // A consumer reads every value: what passed the decoder must be safe to read.
            List<List<Object>> values = Values.of(decoder.root());
            assertEquals(decoder.root().getRowCount(), values.size());
          }
          assertTrue(i >= HEADER, what + ": a header flip must not pass");
        } catch (IOException e) {
          failures++;
          assertNotNull(e.getMessage(), what);
          assertTrue(e.getMessage().contains("block "), what + ": " + e.getMessage());
        } catch (RuntimeException | Error e) {
          fail(what + ": escaped as " + e, e);
        }
        assertEquals(0, allocator.getAllocatedMemory(), what + " leaked");
      }
    }
    assertTrue(failures >= 2 * HEADER, codec + ": only " + failures + " flips failed");
  }

  /**
   * The raw iterator does not decode the body, so it cannot check the field count against it: a
   * flip there is handed on as read unless no schema could have that many fields. Flips in the
   * length and the tag always fail.
   */
  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#blockCodecs")
  void rawBlockIteratorRejectsEveryFlippedLengthOrTagByte(
      BlockCodec codec, BufferAllocator allocator) throws IOException {
    byte[] block;
    block = oneBlock(codec, allocator);
    for (int i = 0; i < HEADER; i++) {
      boolean fieldCountByte = i >= 8 && i < 16;
      for (int mask : MASKS) {
        byte[] flipped = block.clone();
        flipped[i] ^= (byte) mask;
        String what = codec + " block, byte " + i + " ^ " + mask;
        long count = ByteBuffer.wrap(flipped, 8, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        boolean plausibleCount = fieldCountByte && count >= 0 && count <= Integer.MAX_VALUE;
        try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(flipped))) {
          while (raw.next()) {
            // A shortened length leaves bytes that must then fail as a block of their own.
            assertEquals(count, raw.fieldCount(), what);
          }
          assertTrue(plausibleCount, what + ": must not pass");
        } catch (IOException e) {
          assertFalse(plausibleCount, what + ": " + e);
          assertTrue(e.getMessage().contains("block "), what + ": " + e.getMessage());
        }
      }
    }
  }

  /** Both masks for header bytes; one of them for two in three body bytes, to keep this quick. */
  private static int[] masksFor(int i) {
    if (i < HEADER) {
      return MASKS;
    }
    int pick = i % 3;
    return pick == 2 ? new int[0] : new int[] {MASKS[pick]};
  }

  private static byte[] oneBlock(BlockCodec codec, BufferAllocator allocator) throws IOException {
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 3, 9)) {
      return Blocks.write(codec, root);
    }
  }
}
