package dev.quiver.shuffle;

import com.github.luben.zstd.Zstd;
import dev.quiver.annotation.Public;
import dev.quiver.codec.CodecTable;
import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.arrow.util.Preconditions;

/**
 * The compression of a shuffle block's body, named by the block's 4-byte tag. Byte-compatible with
 * Comet's native shuffle writer: {@code LZ4_} is the LZ4 frame format, {@code ZSTD} a zstd frame,
 * {@code SNAP} the Snappy framing format, {@code NONE} the IPC stream as is.
 */
@Public
public final class BlockCodec implements StreamCodec {

  /** The zstd level of {@link #ZSTD}: Comet's default. */
  public static final int DEFAULT_ZSTD_LEVEL = 1;

  /**
   * The setting that makes Comet write plain {@code ZSTD} blocks instead of its internal variant.
   */
  public static final String COMET_OFFSETS_AS_LENGTHS_SETTING =
      "spark.comet.shuffle.compression.offsetsAsLengths.enabled";

  public static final BlockCodec LZ4 = new BlockCodec(CodecTable.LZ4, "LZ4_", 0);
  public static final BlockCodec ZSTD = new BlockCodec(CodecTable.ZSTD, "ZSTD", DEFAULT_ZSTD_LEVEL);
  public static final BlockCodec SNAPPY = new BlockCodec(CodecTable.SNAPPY, "SNAP", 0);
  public static final BlockCodec NONE = new BlockCodec(CodecTable.NONE, "NONE", 0);

  /**
   * Comet 1.2.0's zstd variant that stores offsets as lengths before compressing: its layout is
   * Comet-internal, so Quiver rejects it by name.
   */
  private static final byte[] COMET_OFFSETS_AS_LENGTHS_TAG = {(byte) 0xDA, 'S', 'T', 'D'};

  private final CodecTable kind;
  private final byte[] tag;
  private final int zstdLevel;

  private BlockCodec(CodecTable kind, String tag, int zstdLevel) {
    this.kind = kind;
    this.tag = tag.getBytes(StandardCharsets.US_ASCII);
    this.zstdLevel = zstdLevel;
  }

  /** The {@code ZSTD} codec compressing at {@code level} (zstd's range, negative levels too). */
  public static BlockCodec zstd(int level) {
    Preconditions.checkArgument(
        level >= Zstd.minCompressionLevel() && level <= Zstd.maxCompressionLevel(),
        "zstd level must be between %s and %s, got %s",
        Zstd.minCompressionLevel(),
        Zstd.maxCompressionLevel(),
        level);
    return level == DEFAULT_ZSTD_LEVEL ? ZSTD : new BlockCodec(CodecTable.ZSTD, "ZSTD", level);
  }

  /**
   * The codec whose tag is {@code tag} (4 bytes).
   *
   * @throws ShuffleCorruptionException for any other tag, naming it (with block index and offset
   *     -1: this lookup does not know where the tag was read)
   */
  public static BlockCodec forTag(byte[] tag) throws ShuffleCorruptionException {
    BlockCodec codec = lookup(tag);
    if (codec == null) {
      throw new ShuffleCorruptionException(unsupportedTagMessage(tag), -1, -1);
    }
    return codec;
  }

  /** The codec whose tag is {@code tag}, or null. */
  static BlockCodec lookup(byte[] tag) {
    for (BlockCodec codec : new BlockCodec[] {LZ4, ZSTD, SNAPPY, NONE}) {
      if (Arrays.equals(codec.tag, tag)) {
        return codec;
      }
    }
    return null;
  }

  /**
   * Whether {@code tag} is one that Comet or Quiver writes in a block header: a codec's (which
   * {@link #forTag} returns) or Comet's offsets-as-lengths zstd variant (which {@link #forTag}
   * refuses by name). For tools telling a stream of shuffle blocks from other bytes.
   */
  public static boolean isWrittenTag(byte[] tag) {
    return lookup(tag) != null || Arrays.equals(tag, COMET_OFFSETS_AS_LENGTHS_TAG);
  }

  /** Why {@code tag} names no codec Quiver reads: the tag in text and hex, and what to do. */
  static String unsupportedTagMessage(byte[] tag) {
    String shown = "codec tag " + describeTag(tag);
    if (Arrays.equals(tag, COMET_OFFSETS_AS_LENGTHS_TAG)) {
      return shown
          + " is Comet's zstd variant that stores offsets as lengths, a Comet-internal layout"
          + " Quiver does not read; have Comet write plain ZSTD blocks by setting "
          + COMET_OFFSETS_AS_LENGTHS_SETTING
          + "=false";
    }
    return shown + " is not a known codec (expected LZ4_, ZSTD, SNAP or NONE)";
  }

  /**
   * A tag as text with non-printable bytes escaped, then as hex: {@code "\xDASTD" (DA 53 54 44)}.
   */
  static String describeTag(byte[] tag) {
    StringBuilder text = new StringBuilder("\"");
    StringBuilder hex = new StringBuilder(" (hex");
    for (byte b : tag) {
      int v = b & 0xFF;
      if (v >= 0x20 && v < 0x7F && v != '"' && v != '\\') {
        text.append((char) v);
      } else {
        text.append(String.format("\\x%02X", v));
      }
      hex.append(String.format(" %02X", v));
    }
    return text.append('"').append(hex).append(')').toString();
  }

  /** The 4-byte tag that names this codec in a block header. */
  public byte[] tag() {
    return tag.clone();
  }

  /** Lower-case name: lz4, zstd, snappy or none. */
  public String codecName() {
    return kind.codecName();
  }

  /** The level {@link #compress} uses; meaningful for zstd only. */
  public int zstdLevel() {
    return zstdLevel;
  }

  /** Bounded on hostile bytes: see {@link CodecTable}. */
  @Override
  public InputStream decompress(InputStream in) throws IOException {
    return kind.decompress(CodecTable.Framing.SHUFFLE_BLOCK, in);
  }

  @Override
  public OutputStream compress(OutputStream out) throws IOException {
    return kind.compress(CodecTable.Framing.SHUFFLE_BLOCK, out, zstdLevel);
  }

  @Override
  public boolean isIdentity() {
    return kind == CodecTable.NONE;
  }

  @Override
  public String toString() {
    return kind == CodecTable.ZSTD && zstdLevel != DEFAULT_ZSTD_LEVEL
        ? "zstd(level " + zstdLevel + ")"
        : codecName();
  }
}
