package dev.quiver.codec;

import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Locale;

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
 *   <li>{@code zstd}: zstd frames (zstd-jni), windows up to {@link CodecTable#ZSTD_WINDOW_LOG_MAX}.
 *   <li>{@code snappy}: snappy-java's own stream format ({@code SnappyInputStream}), not the Snappy
 *       framing format of shuffle blocks.
 *   <li>{@code none}: the bytes as they are.
 * </ul>
 */
@Public
public final class SparkStreamCodec implements StreamCodec {

  public static final SparkStreamCodec LZ4 = new SparkStreamCodec(CodecTable.LZ4);
  public static final SparkStreamCodec ZSTD = new SparkStreamCodec(CodecTable.ZSTD);
  public static final SparkStreamCodec SNAPPY = new SparkStreamCodec(CodecTable.SNAPPY);
  public static final SparkStreamCodec NONE = new SparkStreamCodec(CodecTable.NONE);

  private final CodecTable codec;

  private SparkStreamCodec(CodecTable codec) {
    this.codec = codec;
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

  /** Bounded on hostile bytes: see {@link CodecTable}. */
  @Override
  public InputStream decompress(InputStream in) throws IOException {
    return codec.decompress(CodecTable.Framing.SPARK_STREAM, in);
  }

  @Override
  public OutputStream compress(OutputStream out) throws IOException {
    return codec.compress(CodecTable.Framing.SPARK_STREAM, out, CodecTable.SPARK_ZSTD_LEVEL);
  }

  @Override
  public boolean isIdentity() {
    return codec == CodecTable.NONE;
  }

  @Override
  public String toString() {
    return codec.codecName();
  }
}
