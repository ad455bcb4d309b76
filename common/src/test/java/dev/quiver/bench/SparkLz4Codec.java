package dev.quiver.bench;

import dev.quiver.ipc.StreamCodec;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.Checksum;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Spark's {@code lz4} codec ({@code LZ4CompressionCodec}) as a {@link StreamCodec}: lz4-java block
 * streams with 32 KiB blocks and xxhash32 block checksums seeded as Spark seeds them.
 */
final class SparkLz4Codec implements StreamCodec {

  static final SparkLz4Codec INSTANCE = new SparkLz4Codec();

  /** Spark's {@code spark.io.compression.lz4.blockSize} default. */
  static final int BLOCK_SIZE = 32 * 1024;

  /** The seed Spark gives the xxhash32 block checksums. */
  private static final int CHECKSUM_SEED = 0x9747b28c;

  private SparkLz4Codec() {}

  @Override
  public InputStream decompress(InputStream in) {
    return decompressStream(in);
  }

  @Override
  public OutputStream compress(OutputStream out) {
    return new LZ4BlockOutputStream(
        out, BLOCK_SIZE, LZ4Factory.fastestInstance().fastCompressor(), checksum(), true);
  }

  /** The decompressing stream on its own, for the plain-decompression floor. */
  static LZ4BlockInputStream decompressStream(InputStream in) {
    // Spark: disableConcatenationOfByteStream = false, so stopOnEmptyBlock = false.
    return new LZ4BlockInputStream(
        in, LZ4Factory.fastestInstance().fastDecompressor(), checksum(), false);
  }

  private static Checksum checksum() {
    return XXHashFactory.fastestInstance().newStreamingHash32(CHECKSUM_SEED).asChecksum();
  }

  @Override
  public String toString() {
    return "spark-lz4";
  }
}
