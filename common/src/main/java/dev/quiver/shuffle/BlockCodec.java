package dev.quiver.shuffle;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import dev.quiver.annotation.Public;
import dev.quiver.codec.SafeLz4;
import dev.quiver.codec.SnappyStreams;
import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.arrow.util.Preconditions;
import org.xerial.snappy.SnappyFramedOutputStream;

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

  private enum Kind {
    LZ4,
    ZSTD,
    SNAPPY,
    NONE
  }

  public static final BlockCodec LZ4 = new BlockCodec(Kind.LZ4, "LZ4_", 0);
  public static final BlockCodec ZSTD = new BlockCodec(Kind.ZSTD, "ZSTD", DEFAULT_ZSTD_LEVEL);
  public static final BlockCodec SNAPPY = new BlockCodec(Kind.SNAPPY, "SNAP", 0);
  public static final BlockCodec NONE = new BlockCodec(Kind.NONE, "NONE", 0);

  /**
   * Comet 1.2.0's zstd variant that stores offsets as lengths before compressing: its layout is
   * Comet-internal, so Quiver rejects it by name.
   */
  private static final byte[] COMET_OFFSETS_AS_LENGTHS_TAG = {(byte) 0xDA, 'S', 'T', 'D'};

  private final Kind kind;
  private final byte[] tag;
  private final int zstdLevel;

  private BlockCodec(Kind kind, String tag, int zstdLevel) {
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
    return level == DEFAULT_ZSTD_LEVEL ? ZSTD : new BlockCodec(Kind.ZSTD, "ZSTD", level);
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
    return kind.name().toLowerCase(Locale.ROOT);
  }

  /** The level {@link #compress} uses; meaningful for zstd only. */
  public int zstdLevel() {
    return zstdLevel;
  }

  /**
   * The largest zstd window a block may need, as a log2: zstd's own default limit for decoders
   * ({@code ZSTD_WINDOWLOG_LIMIT_DEFAULT}), pinned so that a change of default cannot raise it. A
   * frame header asking for more fails ("Frame requires too much memory for decoding").
   */
  static final int ZSTD_WINDOW_LOG_MAX = 27;

  /**
   * Why each decompressor is safe on a hostile body (facts checked in the bytecode of lz4-java
   * 1.8.0 and snappy-java 1.1.10.8, and in zstd's documented decoder parameters):
   *
   * <ul>
   *   <li>LZ4 frame: lz4-java's {@code LZ4FrameInputStream}, given {@link SafeLz4}'s decompressor
   *       (the JNI safe one; its own default, {@code fastestInstance()}, can be the Unsafe Java
   *       instance that CVE-2025-12183 covers), which bounds its reads by the block's compressed
   *       length and its writes by the buffer. The stream allocates its two block buffers from the
   *       frame descriptor's maximum block size (64 KiB to 4 MiB: at most 8 MiB for a hostile
   *       header) and refuses a block longer than that maximum before reading it ("Block size ...
   *       exceeded max"); skippable frames are skipped through a 1 KiB buffer.
   *   <li>ZSTD: zstd-jni's native streaming decoder reads only the input it is given and refuses a
   *       window above {@link #ZSTD_WINDOW_LOG_MAX} (128 MiB of native window, reserved when the
   *       frame header is read; pages are touched only as output is produced). Quiver's writer at
   *       zstd's highest level (22) uses exactly that window, so the limit refuses no block Quiver
   *       or Comet (level 1, a 512 KiB window) writes.
   *   <li>SNAP: not snappy-java's {@code SnappyFramedInputStream}, which allocates direct buffers
   *       for a chunk's declared 3-byte length (up to 16 MiB and its worst compressed size) before
   *       reading it and for any uncompressed length a chunk declares; Quiver's {@link
   *       SnappyStreams#framed} bounds both by the format's limits and the bytes read.
   * </ul>
   */
  @Override
  public InputStream decompress(InputStream in) throws IOException {
    switch (kind) {
      case LZ4:
        return new LZ4FrameInputStream(
            in, SafeLz4.decompressor(), XXHashFactory.fastestInstance().hash32());
      case ZSTD:
        return new ZstdInputStreamNoFinalizer(in).setLongMax(ZSTD_WINDOW_LOG_MAX);
      case SNAPPY:
        return SnappyStreams.framed(in);
      default:
        return in;
    }
  }

  @Override
  public OutputStream compress(OutputStream out) throws IOException {
    switch (kind) {
      case LZ4:
        // 64 KiB blocks, as Comet writes: the decoder's buffers are sized by the block size. Unlike
        // Comet, with a content checksum: without one a flipped byte decodes to wrong rows.
        return new LZ4FrameOutputStream(
            out,
            LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
            LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM);
      case ZSTD:
        // Checksummed for the same reason; any zstd reader verifies it.
        return new ZstdOutputStreamNoFinalizer(out, zstdLevel).setChecksum(true);
      case SNAPPY:
        return new SnappyFramedOutputStream(out);
      default:
        return out;
    }
  }

  @Override
  public boolean isIdentity() {
    return kind == Kind.NONE;
  }

  @Override
  public String toString() {
    return kind == Kind.ZSTD && zstdLevel != DEFAULT_ZSTD_LEVEL
        ? "zstd(level " + zstdLevel + ")"
        : codecName();
  }
}
