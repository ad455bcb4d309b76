package dev.quiver.shuffle;

import dev.quiver.io.PiecewiseReads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * One buffer, reused for block after block, that grows when a block's body does not fit.
 *
 * <p>A declared length is trusted up front only up to {@link #TRUSTED_LENGTH}; past that the buffer
 * doubles as the bytes actually arrive. A corrupt length that passes the maximum check on a short
 * stream then costs at most {@code TRUSTED_LENGTH} or twice the bytes the stream really holds, not
 * the length it claims. Growth doubles, so bodies of creeping sizes do not reallocate every time.
 */
final class BodyBuffer {

  /** How much of a declared body length is allocated before any of it has been read. */
  static final int TRUSTED_LENGTH = 4 * 1024 * 1024;

  /** The largest array the JVM reliably allocates. */
  private static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

  private final boolean direct;
  private ByteBuffer buffer;

  BodyBuffer(boolean direct) {
    this.direct = direct;
  }

  /**
   * Reads {@code length} bytes of {@code in} into the buffer.
   *
   * @return the buffer, from position 0 to the bytes read: fewer than {@code length} only if the
   *     stream ended
   */
  ByteBuffer fill(InputStream in, int length) throws IOException {
    // A local, so that release() from a closing thread cannot pull the buffer from under a read.
    ByteBuffer buf = buffer;
    if (buf != null) {
      buf.clear();
    }
    if (buf == null || buf.capacity() < length) {
      buf = grow(buf, length);
    }
    while (true) {
      int stop = Math.min(length, buf.capacity());
      buf.limit(stop);
      PiecewiseReads.readFully(in, buf);
      if (buf.position() < stop || stop == length) {
        break;
      }
      buf = grow(buf, length);
    }
    buf.flip();
    buffer = buf;
    return buf;
  }

  /** The current buffer's capacity, or 0 if there is none yet. */
  int capacity() {
    ByteBuffer buf = buffer;
    return buf == null ? 0 : buf.capacity();
  }

  /** Drops the buffer (a direct one is freed when collected). */
  void release() {
    buffer = null;
  }

  /** A larger buffer holding {@code current}'s bytes up to its position. */
  private ByteBuffer grow(ByteBuffer current, int length) {
    long doubled = current == null ? 0 : 2L * current.capacity();
    int capacity =
        (int) Math.min(MAX_CAPACITY, Math.max(doubled, Math.min(length, TRUSTED_LENGTH)));
    ByteBuffer bigger =
        direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    if (current != null) {
      current.flip();
      bigger.put(current);
    }
    return bigger;
  }
}
