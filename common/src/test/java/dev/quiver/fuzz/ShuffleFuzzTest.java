package dev.quiver.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.RawBlockIterator;
import dev.quiver.shuffle.ShuffleBlockDecoder;
import dev.quiver.shuffle.ShuffleBlockFormat;
import dev.quiver.shuffle.ShuffleCorruptionException;
import dev.quiver.testing.FakeTask;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Tag;

/**
 * The two readers of a stream of shuffle blocks over hostile bytes: the input is the stream. A task
 * scope is attached and completed at the end, as Spark completes a task.
 */
@Tag("bad-input")
class ShuffleFuzzTest {

  /** Cap of the test's own decompression when it sizes the bound (far above the fuzzer's sizes). */
  private static final long DECOMPRESSED_CAP = 64L * 1024 * 1024;

  /** {@link ShuffleBlockDecoder}: every block decoded, every value of every batch read. */
  @FuzzTest
  void blockDecoder(byte[] input) throws Throwable {
    FuzzChecks.Memory memory = FuzzChecks.memory();
    FakeTask task = new FakeTask();
    Throwable thrown = null;
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(
            new ByteArrayInputStream(input),
            memory.allocator,
            task,
            ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
            "fuzz")) {
      while (decoder.next()) {
        decoder.codec();
        decoder.blockIndex();
        decoder.blockOffset();
        FuzzChecks.readAll(decoder.root());
      }
    } catch (Throwable t) {
      thrown = t;
    } finally {
      task.complete();
    }
    memory.finish(thrown, decompressedLength(input), "shuffle block decoder");
  }

  /** {@link RawBlockIterator}: every block's header and body, the body's length checked. */
  @FuzzTest
  void rawBlocks(byte[] input) throws Throwable {
    FakeTask task = new FakeTask();
    Throwable thrown = null;
    try (RawBlockIterator blocks =
        new RawBlockIterator(
            new ByteArrayInputStream(input),
            task,
            ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
            "fuzz")) {
      while (blocks.next()) {
        blocks.codec();
        blocks.fieldCount();
        blocks.blockIndex();
        blocks.blockOffset();
        ByteBuffer body = blocks.body();
        if (!body.isDirect() || body.position() != 0 || body.remaining() != blocks.bodyLength()) {
          throw new AssertionError(
              "body " + body + " for a declared body length of " + blocks.bodyLength());
        }
        while (body.hasRemaining()) {
          body.get();
        }
      }
    } catch (Throwable t) {
      thrown = t;
    } finally {
      task.complete();
    }
    FuzzChecks.allowOnlyDocumented(thrown);
  }

  /**
   * The most decompressed bytes {@code stream}'s blocks can give: the stream's own length, or the
   * sum of what each block body decompresses to, parsed and decompressed here independently of the
   * readers (bodies cut short by the end of the stream count as far as they go).
   */
  static long decompressedLength(byte[] stream) {
    long total = 0;
    ByteBuffer in = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    int at = 0;
    int header = ShuffleBlockFormat.LENGTH_FIELD_BYTES + ShuffleBlockFormat.HEADER_BYTES;
    while (stream.length - at >= header) {
      long length = in.getLong(at);
      if (length < ShuffleBlockFormat.HEADER_BYTES) {
        break;
      }
      byte[] tag = new byte[ShuffleBlockFormat.TAG_BYTES];
      System.arraycopy(stream, at + header - tag.length, tag, 0, tag.length);
      int bodyStart = at + header;
      long bodyLength =
          Math.min(length - ShuffleBlockFormat.HEADER_BYTES, (long) stream.length - bodyStart);
      try {
        BlockCodec codec = BlockCodec.forTag(tag);
        total +=
            FuzzCodecs.decompressedLength(
                codec, stream, bodyStart, (int) bodyLength, DECOMPRESSED_CAP);
      } catch (ShuffleCorruptionException e) {
        // An unknown tag: the readers stop there too.
        break;
      }
      if (total >= DECOMPRESSED_CAP) {
        break;
      }
      at = bodyStart + (int) bodyLength;
    }
    return Math.max(total, stream.length);
  }
}
