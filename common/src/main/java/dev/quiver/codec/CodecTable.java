package dev.quiver.codec;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import dev.quiver.annotation.Internal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Locale;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.SnappyFramedOutputStream;
import org.xerial.snappy.SnappyOutputStream;

/**
 * The one table of the codecs Quiver reads and writes, in both framings that carry them: Spark's
 * streams ({@link SparkStreamCodec}: broadcast values, Spark-compressed shuffle streams) and
 * shuffle block bodies ({@code dev.quiver.shuffle.BlockCodec}: Comet's native shuffle format).
 *
 * <p>Why each decompressor is safe on hostile bytes (facts checked in the bytecode of lz4-java
 * 1.8.0 and snappy-java 1.1.10.8, and in zstd's documented decoder parameters):
 *
 * <ul>
 *   <li>LZ4, Spark's framing: Quiver's own {@link SparkLz4InputStream}, not lz4-java's {@code
 *       LZ4BlockInputStream}, which decompresses with the fast decompressor and crashes the JVM on
 *       hostile bytes. Concatenated streams read as one, as in Spark.
 *   <li>LZ4, block framing (the LZ4 frame format): lz4-java's {@code LZ4FrameInputStream}, given
 *       {@link SafeLz4}'s decompressor (the JNI safe one; its own default, {@code
 *       fastestInstance()}, can be the Unsafe Java instance that CVE-2025-12183 covers), which
 *       bounds its reads by the block's compressed length and its writes by the buffer. The stream
 *       allocates its two block buffers from the frame descriptor's maximum block size (64 KiB to 4
 *       MiB: at most 8 MiB for a hostile header) and refuses a block longer than that maximum
 *       before reading it ("Block size ... exceeded max"); skippable frames are skipped through a 1
 *       KiB buffer.
 *   <li>ZSTD, both framings: zstd-jni's native streaming decoder reads only the input it is given
 *       and refuses a window above {@link #ZSTD_WINDOW_LOG_MAX} (128 MiB of native window, reserved
 *       when the frame header is read; pages are touched only as output is produced). Quiver's
 *       block writer at zstd's highest level (22) uses exactly that window, so the limit refuses no
 *       block Quiver or Comet (level 1, a 512 KiB window) writes, nor any stream Spark writes.
 *   <li>Snappy: neither of snappy-java's input streams. {@code SnappyInputStream} (Spark's framing)
 *       allocates a hostile chunk length (up to 512 MiB) and declared uncompressed length
 *       (unbounded) before the bytes exist; {@code SnappyFramedInputStream} (block framing)
 *       allocates direct buffers for a chunk's declared 3-byte length (up to 16 MiB and its worst
 *       compressed size) before reading it and for any uncompressed length a chunk declares.
 *       Quiver's {@link SnappyStreams} bounds both by the format's limits and the bytes read.
 * </ul>
 */
@Internal
public enum CodecTable {
  LZ4,
  ZSTD,
  SNAPPY,
  NONE;

  /** The two framings a codec's bytes come in. */
  public enum Framing {
    /** As Spark's {@code CompressionCodec} frames them ({@code spark.io.compression.codec}). */
    SPARK_STREAM,
    /** As a shuffle block's body (the codec's standard format, as Comet writes it). */
    SHUFFLE_BLOCK
  }

  /** Spark's {@code spark.io.compression.lz4.blockSize} default. */
  static final int SPARK_LZ4_BLOCK_SIZE = 32 * 1024;

  /** Spark's {@code spark.io.compression.zstd.level} default. */
  static final int SPARK_ZSTD_LEVEL = 1;

  /** Spark's {@code spark.io.compression.snappy.blockSize} default. */
  private static final int SPARK_SNAPPY_BLOCK_SIZE = 32 * 1024;

  /**
   * The largest zstd window a stream or block may need, as a log2: zstd's own default limit for
   * decoders ({@code ZSTD_WINDOWLOG_LIMIT_DEFAULT}), pinned so that a change of default cannot
   * raise it. A frame header asking for more fails ("Frame requires too much memory for decoding").
   */
  public static final int ZSTD_WINDOW_LOG_MAX = 27;

  /** Lower-case name: lz4, zstd, snappy or none. */
  public String codecName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** A stream of what {@code in} holds, decompressed; bounded on hostile bytes (see above). */
  public InputStream decompress(Framing framing, InputStream in) throws IOException {
    boolean spark = framing == Framing.SPARK_STREAM;
    switch (this) {
      case LZ4:
        return spark
            ? new SparkLz4InputStream(in)
            : new LZ4FrameInputStream(
                in, SafeLz4.decompressor(), XXHashFactory.fastestInstance().hash32());
      case ZSTD:
        return new ZstdInputStreamNoFinalizer(in).setLongMax(ZSTD_WINDOW_LOG_MAX);
      case SNAPPY:
        return spark ? SnappyStreams.sparkStream(in) : SnappyStreams.framed(in);
      default:
        return in;
    }
  }

  /**
   * A stream that compresses into {@code out}.
   *
   * @param zstdLevel the level for zstd; ignored by the other codecs
   */
  public OutputStream compress(Framing framing, OutputStream out, int zstdLevel)
      throws IOException {
    boolean spark = framing == Framing.SPARK_STREAM;
    switch (this) {
      case LZ4:
        // Blocks: 64 KiB, as Comet writes (the decoder's buffers are sized by the block size), and
        // unlike Comet with a content checksum: without one a flipped byte decodes to wrong rows.
        return spark
            ? new LZ4BlockOutputStream(
                out,
                SPARK_LZ4_BLOCK_SIZE,
                LZ4Factory.fastestInstance().fastCompressor(),
                XXHashFactory.fastestInstance()
                    .newStreamingHash32(SparkLz4InputStream.CHECKSUM_SEED)
                    .asChecksum(),
                true)
            : new LZ4FrameOutputStream(
                out,
                LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
                LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM);
      case ZSTD:
        // Blocks are checksummed for the same reason; any zstd reader verifies it. Spark's
        // streams are written as Spark's codec writes them.
        ZstdOutputStreamNoFinalizer zstd = new ZstdOutputStreamNoFinalizer(out, zstdLevel);
        return spark ? zstd : zstd.setChecksum(true);
      case SNAPPY:
        return spark
            ? new SnappyOutputStream(out, SPARK_SNAPPY_BLOCK_SIZE)
            : new SnappyFramedOutputStream(out);
      default:
        return out;
    }
  }
}
