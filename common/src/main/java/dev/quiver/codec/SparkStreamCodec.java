package dev.quiver.codec;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Locale;
import java.util.zip.Checksum;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.SnappyOutputStream;

/**
 * Spark's {@code spark.io.compression.codec} codecs, framed as Spark frames them, without Spark:
 * what a broadcast value written by Spark (or by an engine through Spark's codec) is compressed
 * with. Spark's own classes stay the reference; these read the same bytes.
 *
 * <ul>
 *   <li>{@code lz4}: lz4-java's {@code LZ4Block} streams, 32 KiB blocks, xxhash32 block checksums
 *       with Spark's seed, written with lz4-java's {@code LZ4BlockOutputStream} and read with
 *       Quiver's own {@link SparkLz4InputStream} (lz4's safe decompressor, every length checked;
 *       concatenated streams read as one, as in Spark; an end of input counts as the end of the
 *       data only at the very start or right after a stream's end block).
 *   <li>{@code zstd}: zstd frames (zstd-jni).
 *   <li>{@code snappy}: snappy-java's own stream format ({@code SnappyInputStream}), not the Snappy
 *       framing format of shuffle blocks.
 *   <li>{@code none}: the bytes as they are.
 * </ul>
 */
@Public
public final class SparkStreamCodec implements StreamCodec {

  /** Spark's {@code spark.io.compression.lz4.blockSize} default. */
  static final int LZ4_BLOCK_SIZE = 32 * 1024;

  /** Spark's {@code spark.io.compression.snappy.blockSize} default. */
  private static final int SNAPPY_BLOCK_SIZE = 32 * 1024;

  /** Spark's {@code spark.io.compression.zstd.level} default. */
  private static final int ZSTD_LEVEL = 1;

  private enum Kind {
    LZ4,
    ZSTD,
    SNAPPY,
    NONE
  }

  public static final SparkStreamCodec LZ4 = new SparkStreamCodec(Kind.LZ4);
  public static final SparkStreamCodec ZSTD = new SparkStreamCodec(Kind.ZSTD);
  public static final SparkStreamCodec SNAPPY = new SparkStreamCodec(Kind.SNAPPY);
  public static final SparkStreamCodec NONE = new SparkStreamCodec(Kind.NONE);

  private final Kind kind;

  private SparkStreamCodec(Kind kind) {
    this.kind = kind;
  }

  /**
   * The codec Spark names {@code name}: {@code lz4}, {@code zstd}, {@code snappy} or {@code none}
   * (any case).
   *
   * @throws IllegalArgumentException for any other name
   */
  public static SparkStreamCodec forName(String name) {
    for (SparkStreamCodec codec : new SparkStreamCodec[] {LZ4, ZSTD, SNAPPY, NONE}) {
      if (codec.toString().equals(name.toLowerCase(Locale.ROOT))) {
        return codec;
      }
    }
    throw new IllegalArgumentException(
        "unknown codec '" + name + "' (expected lz4, zstd, snappy or none)");
  }

  @Override
  public InputStream decompress(InputStream in) throws IOException {
    switch (kind) {
      case LZ4:
        // Not lz4-java's LZ4BlockInputStream: it decompresses with the fast decompressor, which
        // crashes the JVM on hostile bytes. Concatenated streams read as one, as in Spark.
        return new SparkLz4InputStream(in);
      case ZSTD:
        return new ZstdInputStreamNoFinalizer(in);
      case SNAPPY:
        // Not snappy-java's SnappyInputStream: it allocates a hostile chunk length (up to 512 MiB)
        // and declared uncompressed length (unbounded) before the bytes exist. See SnappyStreams.
        return SnappyStreams.sparkStream(in);
      default:
        return in;
    }
  }

  @Override
  public OutputStream compress(OutputStream out) throws IOException {
    switch (kind) {
      case LZ4:
        return new LZ4BlockOutputStream(
            out,
            LZ4_BLOCK_SIZE,
            LZ4Factory.fastestInstance().fastCompressor(),
            lz4Checksum(),
            true);
      case ZSTD:
        return new ZstdOutputStreamNoFinalizer(out, ZSTD_LEVEL);
      case SNAPPY:
        return new SnappyOutputStream(out, SNAPPY_BLOCK_SIZE);
      default:
        return out;
    }
  }

  private static Checksum lz4Checksum() {
    return XXHashFactory.fastestInstance()
        .newStreamingHash32(SparkLz4InputStream.CHECKSUM_SEED)
        .asChecksum();
  }

  @Override
  public boolean isIdentity() {
    return kind == Kind.NONE;
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT);
  }
}
