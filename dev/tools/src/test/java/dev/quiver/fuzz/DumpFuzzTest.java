package dev.quiver.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.tools.DumpReaders;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;

/**
 * The dump tool's readers ({@code dev/dump}) over hostile files, with rows rendered as with {@code
 * --rows}. Besides Quiver's documented exceptions the tool may fail with its own plain {@code
 * IOException} naming the file (see {@link FuzzChecks#DUMP_OWN_ERROR}).
 */
@Tag("bad-input")
class DumpFuzzTest {

  /**
   * In a broadcast value input's first byte: the payload is uncompressed; the target compresses.
   */
  static final int COMPRESS_BY_TARGET = 0x04;

  /** The Spark codecs, by the low two bits of a broadcast value input's first byte. */
  static final SparkStreamCodec[] SPARK_CODECS = {
    SparkStreamCodec.NONE, SparkStreamCodec.LZ4, SparkStreamCodec.ZSTD, SparkStreamCodec.SNAPPY
  };

  private static final long DECOMPRESSED_CAP = 64L * 1024 * 1024;

  private static final Path DIR = tempDir();

  /**
   * A shuffle data file and maybe its index. Byte 0: the number of 8-byte offsets in the index (0:
   * no index file); then the index's bytes (cut short where the input ends); the rest is the data.
   */
  @FuzzTest
  void shuffleFile(byte[] input) throws Throwable {
    if (input.length == 0) {
      return;
    }
    int indexBytes = Math.min(8 * (input[0] & 0xFF), input.length - 1);
    Path data = DIR.resolve("fuzz.data");
    Path index = DIR.resolve("fuzz.index");
    byte[] dataBytes = Arrays.copyOfRange(input, 1 + indexBytes, input.length);
    Files.write(data, dataBytes);
    if (input[0] != 0) {
      Files.write(index, Arrays.copyOfRange(input, 1, 1 + indexBytes));
    } else {
      Files.deleteIfExists(index);
    }
    FuzzChecks.Memory memory = FuzzChecks.memory();
    Throwable thrown = null;
    try {
      DumpReaders.shuffleFile(data, input[0] != 0 ? index : null, memory.allocator);
    } catch (Throwable t) {
      thrown = t;
    }
    memory.finish(
        thrown, true, ShuffleFuzzTest.decompressedLength(dataBytes), "dump of a shuffle file");
  }

  /**
   * A broadcast value file. Byte 0: the codec (low two bits, {@link #SPARK_CODECS}) and {@link
   * #COMPRESS_BY_TARGET}; the rest is the file, or with that bit the IPC stream to compress.
   */
  @FuzzTest
  void broadcastValue(byte[] input) throws Throwable {
    if (input.length == 0) {
      return;
    }
    SparkStreamCodec codec = SPARK_CODECS[input[0] & 3];
    byte[] file;
    long decompressed;
    if ((input[0] & COMPRESS_BY_TARGET) != 0) {
      file = FuzzCodecs.compress(codec, input, 1, input.length - 1);
      decompressed = input.length - 1L;
    } else {
      file = Arrays.copyOfRange(input, 1, input.length);
      decompressed =
          Math.max(
              file.length,
              FuzzCodecs.decompressedLength(codec, file, 0, file.length, DECOMPRESSED_CAP));
    }
    Path path = DIR.resolve("fuzz.bin");
    Files.write(path, file);
    FuzzChecks.Memory memory = FuzzChecks.memory();
    Throwable thrown = null;
    try {
      DumpReaders.broadcastValue(path, codec, memory.allocator);
    } catch (Throwable t) {
      thrown = t;
    }
    memory.finish(thrown, true, decompressed, "dump of a " + codec + " broadcast value");
  }

  /** The selector byte of a broadcast value input. */
  static byte broadcastSelector(StreamCodec codec, boolean compressByTarget) {
    for (int i = 0; i < SPARK_CODECS.length; i++) {
      if (SPARK_CODECS[i] == codec) {
        return (byte) (i | (compressByTarget ? COMPRESS_BY_TARGET : 0));
      }
    }
    throw new IllegalArgumentException(codec.toString());
  }

  private static Path tempDir() {
    try {
      Path dir = Files.createTempDirectory("quiver-dump-fuzz");
      dir.toFile().deleteOnExit();
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
