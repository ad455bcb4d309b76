package dev.quiver.io;

import dev.quiver.annotation.Internal;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * Reads a {@link ByteBuffer}'s remaining bytes, heap or direct, without copying the buffer: each
 * read takes its bytes straight from it. For heap buffers prefer {@link #of(ByteBuffer)}, which
 * gives an {@link ArrayInputStream} over the backing array (the codecs' in-place fast path).
 */
@Internal
public final class ByteBufferInputStream extends InputStream {

  private final ByteBuffer buffer;

  /** Reads {@code buffer}'s remaining bytes; the buffer's own position and limit do not move. */
  public ByteBufferInputStream(ByteBuffer buffer) {
    this.buffer = buffer.duplicate();
  }

  /** A stream over {@code buffer}'s remaining bytes: over its array when it has one. */
  public static InputStream of(ByteBuffer buffer) {
    if (buffer.hasArray()) {
      return new ArrayInputStream(
          buffer.array(), buffer.arrayOffset() + buffer.position(), buffer.remaining());
    }
    return new ByteBufferInputStream(buffer);
  }

  @Override
  public int read() {
    return buffer.hasRemaining() ? buffer.get() & 0xFF : -1;
  }

  @Override
  public int read(byte[] into, int offset, int length) {
    if (length == 0) {
      return 0;
    }
    if (!buffer.hasRemaining()) {
      return -1;
    }
    int n = Math.min(length, buffer.remaining());
    buffer.get(into, offset, n);
    return n;
  }

  @Override
  public long skip(long n) {
    int skipped = (int) Math.max(0, Math.min(n, buffer.remaining()));
    buffer.position(buffer.position() + skipped);
    return skipped;
  }

  @Override
  public int available() {
    return buffer.remaining();
  }
}
