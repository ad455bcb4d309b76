package dev.quiver.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.Codecs;
import org.junit.jupiter.api.Tag;

/**
 * {@link ArrowIpc#decode} with every codec. An input is one selector byte (low three bits: the
 * codec, see {@link FuzzCodecs#CODECS}) and a payload.
 */
@Tag("bad-input")
class IpcDecodeFuzzTest {

  /**
   * The payload is an uncompressed IPC stream: the target compresses it with the codec and decodes
   * it, so mutations reach the IPC decoder past the codecs' checksums.
   */
  @FuzzTest
  void uncompressedStream(byte[] input) throws Throwable {
    if (input.length == 0) {
      return;
    }
    StreamCodec codec = FuzzCodecs.pick(input[0]);
    byte[] compressed = Codecs.compress(codec, input, 1, input.length - 1);
    decode(codec, compressed, input.length - 1);
  }

  /** The payload goes to the decompressing decode as it is: the codecs' framing itself. */
  @FuzzTest
  void compressedBytes(byte[] input) throws Throwable {
    if (input.length == 0) {
      return;
    }
    StreamCodec codec = FuzzCodecs.pick(input[0]);
    byte[] compressed = new byte[input.length - 1];
    System.arraycopy(input, 1, compressed, 0, compressed.length);
    decode(codec, compressed, 0);
  }

  /**
   * Decodes and reads everything; checks the exception, the memory and the bound (for the larger of
   * {@code knownLength} and the decompressed bytes the decoder read).
   */
  private static void decode(StreamCodec codec, byte[] compressed, long knownLength)
      throws Throwable {
    FuzzCodecs.Counting counting = new FuzzCodecs.Counting(codec);
    FuzzChecks.Memory memory = FuzzChecks.memory();
    Throwable thrown = null;
    try (DecodedStream stream = ArrowIpc.decode(compressed, counting, memory.allocator, "fuzz")) {
      FuzzChecks.readAll(stream, memory.allocator);
    } catch (Throwable t) {
      thrown = t;
    }
    memory.finish(
        thrown, Math.max(knownLength, counting.read()), "decode, " + FuzzCodecs.describe(codec));
  }
}
