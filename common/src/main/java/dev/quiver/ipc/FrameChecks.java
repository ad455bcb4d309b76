package dev.quiver.ipc;

import java.nio.ByteBuffer;

/**
 * The checks both body-compression frame decoders ({@link Lz4FrameDecoder}, {@link
 * ZstdFrameDecoder}) make before reading a frame's bytes, with the same messages. {@code frame}
 * names the frame in them: "LZ4 frame", "zstd frame".
 */
final class FrameChecks {

  private FrameChecks() {}

  /**
   * Checks that {@code src} holds a header of {@code headerBytes} that starts with {@code magic}
   * (little-endian); {@code article} goes before the frame's name ("an LZ4 frame").
   */
  static void requireHeader(
      ByteBuffer src, int headerBytes, int magic, String frame, String article)
      throws IpcFormatException {
    require(src, 0, headerBytes, frame, "its frame header");
    int found = src.getInt(0);
    if (found != magic) {
      throw new IpcFormatException(
          String.format("not %s %s (magic 0x%08X, 0x%08X expected)", article, frame, found, magic));
    }
  }

  /** Checks that {@code length} bytes from {@code at} exist, naming {@code what} if not. */
  static void require(ByteBuffer src, int at, long length, String frame, String what)
      throws IpcFormatException {
    if (length > src.limit() - (long) at) {
      throw new IpcFormatException(
          String.format("%s ends (at byte %d) inside %s (truncated)", frame, src.limit(), what));
    }
  }
}
