package dev.quiver.codec;

import dev.quiver.annotation.Public;
import dev.quiver.io.CorruptBlockException;

/**
 * Bytes that are not valid Spark lz4 framing (lz4-java's {@code LZ4Block} streams): a bad magic or
 * token, a length the block's header may not claim, a block that does not decompress to its
 * declared length, a checksum mismatch, or an input that ends inside the framing (truncation). The
 * message names the block and where it starts; {@link #blockIndex()} and {@link #blockOffset()}
 * give the same as numbers.
 */
@Public
public class Lz4FramingException extends CorruptBlockException {
  private static final long serialVersionUID = 1L;

  /**
   * @param blockIndex the block's position in the input (0 for the first; end blocks count), or -1
   *     if unknown
   * @param blockOffset the offset of the block's first header byte in the compressed input
   */
  public Lz4FramingException(String message, long blockIndex, long blockOffset) {
    super(message, blockIndex, blockOffset);
  }

  public Lz4FramingException(String message, long blockIndex, long blockOffset, Throwable cause) {
    super(message, blockIndex, blockOffset, cause);
  }
}
