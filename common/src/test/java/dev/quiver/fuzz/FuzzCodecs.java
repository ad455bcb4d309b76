package dev.quiver.fuzz;

import dev.quiver.ipc.SparkStreamCodec;
import dev.quiver.ipc.StreamCodec;
import dev.quiver.shuffle.BlockCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
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

  static byte[] compress(StreamCodec codec, byte[] bytes, int offset, int length)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(length / 2 + 64);
    try (OutputStream compressed = codec.compress(out)) {
      compressed.write(bytes, offset, length);
    }
    return out.toByteArray();
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
    private long read;

    Counting(StreamCodec codec) {
      this.codec = codec;
    }

    /** Decompressed bytes read so far, over every stream this codec opened. */
    long read() {
      return read;
    }

    @Override
    public InputStream decompress(InputStream in) throws IOException {
      return new FilterInputStream(codec.decompress(in)) {
        @Override
        public int read() throws IOException {
          int b = super.read();
          if (b >= 0) {
            Counting.this.read++;
          }
          return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          int n = in.read(b, off, len);
          if (n > 0) {
            Counting.this.read += n;
          }
          return n;
        }

        @Override
        public long skip(long n) throws IOException {
          long skipped = in.skip(n);
          Counting.this.read += skipped;
          return skipped;
        }
      };
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
