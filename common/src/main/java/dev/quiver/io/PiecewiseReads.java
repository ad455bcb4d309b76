package dev.quiver.io;

import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * Reads from an {@link InputStream} into a {@link ByteBuffer} in pieces of at most {@link
 * #PIECE_SIZE} bytes, without ever calling {@link InputStream#available()}.
 */
@Public
public final class PiecewiseReads {

  /**
   * The largest single read. {@code FileInputStream.read} mallocs a native buffer of the requested
   * size for every read above 8 KiB; past 64 KiB that per-read cost becomes visible (as {@code
   * madvise} on macOS), while 64 KiB already amortises the syscall well.
   */
  public static final int PIECE_SIZE = 64 * 1024;

  private static final ThreadLocal<byte[]> PIECE =
      ThreadLocal.withInitial(() -> new byte[PIECE_SIZE]);

  private PiecewiseReads() {}

  /** A heap array of {@link #PIECE_SIZE} bytes owned by the calling thread, for staging reads. */
  static byte[] threadPiece() {
    return PIECE.get();
  }

  /**
   * Reads at most one piece into {@code dst}: straight into its backing array when it has one; into
   * a direct buffer through the stream itself when it is {@link BufferReadable} (which decides how
   * much to read); otherwise through the thread's staging array.
   *
   * @return the number of bytes read, or -1 at end of stream
   */
  public static int readPiece(InputStream in, ByteBuffer dst) throws IOException {
    int want = Math.min(dst.remaining(), PIECE_SIZE);
    if (want == 0) {
      return 0;
    }
    if (!dst.hasArray() && in instanceof BufferReadable) {
      return ((BufferReadable) in).read(dst);
    }
    if (dst.hasArray()) {
      int n = in.read(dst.array(), dst.arrayOffset() + dst.position(), want);
      if (n > 0) {
        dst.position(dst.position() + n);
      }
      return n;
    }
    byte[] piece = threadPiece();
    int n = in.read(piece, 0, want);
    if (n > 0) {
      dst.put(piece, 0, n);
    }
    return n;
  }

  /**
   * Fills {@code dst} from {@code in}, stopping short only at end of stream.
   *
   * @return the number of bytes read; fewer than {@code dst.remaining()} on entry only when the
   *     stream ended
   */
  public static int readFully(InputStream in, ByteBuffer dst) throws IOException {
    int total = 0;
    while (dst.hasRemaining()) {
      int n = readPiece(in, dst);
      if (n < 0) {
        break;
      }
      total += n;
    }
    return total;
  }

  /**
   * Fills {@code dst[off, off + len)} from {@code in}, stopping short only at end of stream. Reads
   * go straight into {@code dst}, in pieces of at most {@link #PIECE_SIZE}.
   *
   * @return the number of bytes read
   */
  public static int readFully(InputStream in, byte[] dst, int off, int len) throws IOException {
    int total = 0;
    while (total < len) {
      int n = in.read(dst, off + total, Math.min(len - total, PIECE_SIZE));
      if (n < 0) {
        break;
      }
      total += n;
    }
    return total;
  }
}
