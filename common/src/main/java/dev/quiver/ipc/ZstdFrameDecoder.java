package dev.quiver.ipc;

import com.github.luben.zstd.ZstdDecompressCtx;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Decodes a zstd frame (the body compression codec {@code ZSTD}) into a buffer of exactly the
 * length the IPC body declares, with zstd-jni's one-shot decompression: the output is the
 * destination buffer itself, sized to the declared length, so zstd allocates nothing for the
 * frame's window and cannot write past it.
 *
 * <p>Before decompressing, the frame header is read here: the magic, no dictionary, a content size
 * (when the frame states one) equal to the declared length, and a window no larger than {@link
 * #MAX_WINDOW} or the declared length. zstd-jni's contexts have no window limit of their own for
 * one-shot decompression (zstd's {@code windowLogMax} applies to streaming only), and a frame whose
 * window exceeds its content was not written for this buffer.
 */
final class ZstdFrameDecoder {

  static final int MAGIC = 0xFD2FB528;

  /** The frame's name in messages. */
  private static final String FRAME = "zstd frame";

  /**
   * A zstd block decodes to at most 128 KiB and an RLE block takes 4 bytes (a 3-byte header and the
   * byte), the format's densest: 32 Ki bytes per input byte at most.
   */
  static final long MAX_EXPANSION = 1 << 15;

  /** zstd's own default window limit for its decoder ({@code ZSTD_WINDOWLOG_LIMIT_DEFAULT}, 27). */
  static final long MAX_WINDOW = 1L << 27;

  private static final int[] DICTIONARY_ID_BYTES = {0, 1, 2, 4};

  private ZstdFrameDecoder() {}

  /**
   * Decodes the zstd frame in {@code in} (all of its remaining bytes; its position is not moved),
   * which must be direct, into {@code out} (direct) at 0, which must then hold exactly {@code
   * out.capacity()} bytes.
   *
   * @throws IpcFormatException for bytes that are not valid zstd of exactly that length
   */
  static void decode(ByteBuffer in, ByteBuffer out) throws IpcFormatException {
    ByteBuffer src = in.slice().order(ByteOrder.LITTLE_ENDIAN);
    int declared = out.capacity();
    checkHeader(src, declared);
    int decoded;
    try (ZstdDecompressCtx context = new ZstdDecompressCtx()) {
      decoded = context.decompressDirectByteBuffer(out, 0, declared, src, 0, src.limit());
    } catch (RuntimeException e) {
      // zstd-jni throws ZstdException (a RuntimeException) for corrupt input and too small output.
      throw new IpcFormatException(
          String.format(
              "zstd does not decompress it into the %d bytes declared: %s",
              declared, e.getMessage()),
          e);
    }
    if (decoded != declared) {
      throw new IpcFormatException(
          String.format(
              "zstd decompresses to %d bytes, but the buffer declares %d", decoded, declared));
    }
  }

  private static void checkHeader(ByteBuffer src, int declared) throws IpcFormatException {
    FrameChecks.requireHeader(src, 6, MAGIC, FRAME, "a");
    int descriptor = src.get(4) & 0xFF;
    int contentSizeFlag = descriptor >>> 6;
    boolean singleSegment = (descriptor & 0x20) != 0;
    if ((descriptor & 0x08) != 0) {
      throw new IpcFormatException(
          String.format("zstd frame: reserved bit set in descriptor 0x%02X", descriptor));
    }
    int at = 5;
    long window = -1;
    if (!singleSegment) {
      int windowDescriptor = src.get(at++) & 0xFF;
      long base = 1L << (10 + (windowDescriptor >>> 3));
      window = base + (base / 8) * (windowDescriptor & 0x7);
    }
    int dictionaryBytes = DICTIONARY_ID_BYTES[descriptor & 0x3];
    FrameChecks.require(src, at, dictionaryBytes, FRAME, "its dictionary id");
    long dictionary = 0;
    for (int i = 0; i < dictionaryBytes; i++) {
      dictionary |= (src.get(at + i) & 0xFFL) << (8 * i);
    }
    at += dictionaryBytes;
    if (dictionary != 0) {
      throw new IpcFormatException(
          "zstd frame: needs dictionary " + dictionary + ", which Arrow IPC has none of");
    }
    int contentSizeBytes = contentSizeFlag == 0 ? (singleSegment ? 1 : 0) : 1 << contentSizeFlag;
    FrameChecks.require(src, at, contentSizeBytes, FRAME, "its content size");
    long contentSize = -1;
    if (contentSizeBytes > 0) {
      contentSize = 0;
      for (int i = 0; i < contentSizeBytes; i++) {
        contentSize |= (src.get(at + i) & 0xFFL) << (8 * i);
      }
      if (contentSizeBytes == 2) {
        contentSize += 256;
      }
      if (contentSize != declared) {
        throw new IpcFormatException(
            String.format(
                "zstd frame: content size %s, but the buffer declares %d bytes",
                Long.toUnsignedString(contentSize), declared));
      }
    }
    if (window > Math.max(MAX_WINDOW, declared)) {
      throw new IpcFormatException(
          String.format(
              "zstd frame: window of %d bytes, more than %d allowed for a %d-byte buffer",
              window, Math.max(MAX_WINDOW, declared), declared));
    }
  }
}
