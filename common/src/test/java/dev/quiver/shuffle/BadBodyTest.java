package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Well-formed headers around bodies that are not one batch of the declared shape: the decoder
 * reports corruption of that block and keeps nothing.
 */
@org.junit.jupiter.api.Tag("bad-input")
class BadBodyTest {

  /** Bounded as an engine bounds a task: a random body's wild row count fails fast. */
  @RegisterExtension
  static final AllocatorExtension ALLOCATOR = AllocatorExtension.withLimit(16 << 20);

  @Test
  void fieldCountDisagreeingWithTheSchemaIsCorruption(BufferAllocator allocator)
      throws IOException {
    byte[] stream;
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 5, 1)) {
      stream = Blocks.write(BlockCodec.LZ4, root);
    }
    stream[8] = 16; // the field count; the schema has 17
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(stream), allocator)) {
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, decoder::next);
      assertTrue(
          e.getMessage().contains("the header declares 16 fields but the body's schema has 17"),
          e.getMessage());
      assertThrows(IllegalStateException.class, decoder::next, "no reading on after a failure");
    }
    // The raw path does not decode, so it hands on the count as written.
    try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream))) {
      assertTrue(raw.next());
      assertEquals(16, raw.fieldCount());
    }
  }

  @Test
  void bodyWithTwoBatchesOrNoneIsCorruption(BufferAllocator allocator) throws IOException {
    byte[] two;
    byte[] zero;
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0, 3);
        ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
      DictionaryProvider none = new DictionaryProvider.MapDictionaryProvider();
      two =
          ArrowIpc.encode(
              root.getSchema(), Arrays.asList(batch, batch), none, BlockCodec.LZ4, allocator);
      zero =
          ArrowIpc.encode(
              root.getSchema(), Collections.emptyList(), none, BlockCodec.LZ4, allocator);
    }
    assertDecoderRejects(
        Blocks.block(3, BlockCodec.LZ4, two), "holds 2 record batches instead of one", allocator);
    assertDecoderRejects(
        Blocks.block(3, BlockCodec.LZ4, zero), "holds 0 record batches instead of one", allocator);
  }

  @Test
  void bodyInAnotherCodecThanItsTagIsCorruption(BufferAllocator allocator) throws IOException {
    byte[] lz4Body;
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0, 3)) {
      lz4Body =
          ArrowIpc.encode(root, new DictionaryProvider.MapDictionaryProvider(), BlockCodec.LZ4);
    }
    ShuffleCorruptionException e =
        assertDecoderRejects(
            Blocks.block(3, BlockCodec.ZSTD, lz4Body), "the zstd body does not decode", allocator);
    assertInstanceOf(IpcFormatException.class, e.getCause());
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#blockCodecs")
  void randomBodiesAreCorruption(BlockCodec codec, BufferAllocator allocator) throws IOException {
    Random random = new Random(17);
    for (int i = 0; i < 100; i++) {
      byte[] body = new byte[random.nextInt(400)];
      random.nextBytes(body);
      assertDecoderRejects(Blocks.block(3, codec, body), "body does not decode", allocator);
    }
  }

  /** Random streams: both readers end or fail with an IOException, nothing else, no leak. */
  @Test
  void randomStreamsFailCleanly(BufferAllocator allocator) throws IOException {
    Random random = new Random(23);
    for (int i = 0; i < 300; i++) {
      byte[] stream = new byte[random.nextInt(300)];
      random.nextBytes(stream);
      if (i % 2 == 0 && stream.length >= 20) {
        // Half with a plausible length and a real tag, so the body is read and decoded.
        System.arraycopy(
            Blocks.header(stream.length - 8, 3, BlockCodec.NONE.tag()), 0, stream, 0, 20);
      }
      readAllExpectingIOException(stream, allocator, "random stream " + i);
    }
  }

  private static void readAllExpectingIOException(
      byte[] stream, BufferAllocator allocator, String what) {
    try (ShuffleBlockDecoder decoder =
            new ShuffleBlockDecoder(new ByteArrayInputStream(stream), allocator);
        RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream))) {
      while (raw.next()) {
        // only headers and lengths are checked here
      }
      while (decoder.next()) {
        // decoded
      }
      assertEquals(0, stream.length, what + " decoded");
    } catch (IOException e) {
      assertTrue(e.getMessage().contains("block 0"), what + ": " + e.getMessage());
    } catch (RuntimeException | Error e) {
      fail(what + ": escaped as " + e, e);
    }
  }

  private static ShuffleCorruptionException assertDecoderRejects(
      byte[] stream, String expected, BufferAllocator allocator) throws IOException {
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(stream), allocator)) {
      ShuffleCorruptionException e = assertThrows(ShuffleCorruptionException.class, decoder::next);
      assertTrue(e.getMessage().contains(expected), e.getMessage());
      assertTrue(e.getMessage().startsWith("Corrupt shuffle block 0 at stream offset 0"));
      assertEquals(0, allocator.getAllocatedMemory());
      return e;
    }
  }
}
