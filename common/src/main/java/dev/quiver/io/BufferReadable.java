package dev.quiver.io;

import dev.quiver.annotation.Internal;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * An input stream that can write into a {@link ByteBuffer} itself, such as a decompressor that
 * decompresses straight into direct memory. {@link PiecewiseReads} hands such a stream the
 * destination buffer instead of staging the bytes through a heap array and copying them.
 */
@Internal
public interface BufferReadable {

  /**
   * Reads at least one byte, and at most {@code dst.remaining()}, into {@code dst} at its position,
   * which it advances; blocks until a byte is available.
   *
   * @return the number of bytes read, 0 only if {@code dst} has no room, or -1 at end of stream
   */
  int read(ByteBuffer dst) throws IOException;
}
