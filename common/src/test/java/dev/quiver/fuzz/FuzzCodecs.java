package dev.quiver.fuzz;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.CountingInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * The codecs the decoders take, picked by an input's first byte, and a wrapper that counts the
 * decompressed bytes a decoder actually reads (the measure of the allocation bound).
 */
final class FuzzCodecs {

  private FuzzCodecs() {}

  /** Indexed by the low three bits of a selector byte. */
  static final StreamCodec[] CODECS = {
    SparkStreamCodec.NONE,
    SparkStreamCodec.LZ4,
    SparkStreamCodec.ZSTD,
    SparkStreamCodec.SNAPPY,
    BlockCodec.NONE,
    BlockCodec.LZ4,
    BlockCodec.ZSTD,
    BlockCodec.SNAPPY
  };

  /** The codec selector byte {@code b} names. */
  static StreamCodec pick(byte b) {
    return CODECS[b & 7];
  }

  /** The selector byte of {@code codec}. */
  static byte selector(StreamCodec codec) {
    for (int i = 0; i < CODECS.length; i++) {
      if (CODECS[i] == codec) {
        return (byte) i;
      }
    }
    throw new IllegalArgumentException(codec.toString());
  }

  /** A name that tells a Spark codec from a block codec of the same name. */
  static String describe(StreamCodec codec) {
    return (codec instanceof BlockCodec ? "block " : "spark ") + codec;
  }

  /** {@link Codecs#compress}, for {@code DumpFuzzTest} until it moves with the dump tool. */
  static byte[] compress(StreamCodec codec, byte[] bytes, int offset, int length)
      throws IOException {
    return Codecs.compress(codec, bytes, offset, length);
  }

  /**
   * Decompresses {@code bytes} to their end, or to {@code cap} bytes; returns the count. For sizing
   * the bound of a decoder that does not take a {@link StreamCodec} (so cannot be counted as it
   * reads); any failure ends the count where it happened.
   */
  static long decompressedLength(
      StreamCodec codec, byte[] bytes, int offset, int length, long cap) {
    long total = 0;
    byte[] piece = new byte[64 * 1024];
    try (InputStream in = codec.decompress(new ByteArrayInputStream(bytes, offset, length))) {
      int n;
      while (total < cap && (n = in.read(piece)) > 0) {
        total += n;
      }
    } catch (IOException | RuntimeException e) {
      // The decoder under test meets the same bytes and must fail cleanly; the count stands.
    }
    return total;
  }

  /** A codec that counts the decompressed bytes read through it. */
  static final class Counting implements StreamCodec {
    private final StreamCodec codec;
    private final CountingInputStream.Counts counts = new CountingInputStream.Counts();

    Counting(StreamCodec codec) {
      this.codec = codec;
    }

    /** Decompressed bytes read so far, over every stream this codec opened. */
    long read() {
      return counts.bytes();
    }

    @Override
    public InputStream decompress(InputStream in) throws IOException {
      return new CountingInputStream(codec.decompress(in), counts);
    }

    @Override
    public OutputStream compress(OutputStream out) throws IOException {
      return codec.compress(out);
    }

    @Override
    public String toString() {
      return codec.toString();
    }
  }
}
