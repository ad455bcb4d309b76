package dev.quiver.testing;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.shuffle.BlockCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import org.apache.arrow.vector.compression.CompressionUtil;

/**
 * The codecs tests run over, as {@code @MethodSource} factories (e.g.
 * {@code @MethodSource("dev.quiver.testing.Codecs#blockCodecs")}), and compression of test bytes.
 */
public final class Codecs {

  private Codecs() {}

  /**
   * Every codec a shuffle block's tag names: {@code LZ4_}, {@code ZSTD}, {@code SNAP}, {@code
   * NONE}.
   */
  public static List<BlockCodec> blockCodecs() {
    return List.of(BlockCodec.LZ4, BlockCodec.ZSTD, BlockCodec.SNAPPY, BlockCodec.NONE);
  }

  /**
   * Every codec a broadcast's IPC streams come in: none, and Spark's {@code
   * spark.io.compression.codec} choices with their Spark framing.
   */
  public static List<StreamCodec> streamCodecs() {
    return List.of(
        StreamCodec.NONE, SparkStreamCodec.LZ4, SparkStreamCodec.ZSTD, SparkStreamCodec.SNAPPY);
  }

  /** Every codec of Arrow's IPC body compression: {@code LZ4_FRAME} and {@code ZSTD}. */
  public static List<CompressionUtil.CodecType> arrowBodyCodecs() {
    return List.of(CompressionUtil.CodecType.LZ4_FRAME, CompressionUtil.CodecType.ZSTD);
  }

  /** {@code bytes} compressed with {@code codec}. */
  public static byte[] compress(StreamCodec codec, byte[] bytes) throws IOException {
    return compress(codec, bytes, 0, bytes.length);
  }

  /** {@code length} bytes of {@code bytes} from {@code offset}, compressed with {@code codec}. */
  public static byte[] compress(StreamCodec codec, byte[] bytes, int offset, int length)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(length / 2 + 64);
    try (OutputStream compressed = codec.compress(out)) {
      compressed.write(bytes, offset, length);
    }
    return out.toByteArray();
  }
}
