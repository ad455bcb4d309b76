package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.io.CorruptBlockException;

/**
 * A shuffle block that cannot be valid: a hostile or impossible length, an unknown codec tag, a
 * field count that disagrees with the body, or a body that does not decode. The message names the
 * block and where it starts; {@link #blockIndex()} and {@link #blockOffset()} give the same as
 * numbers.
 */
@Public
public class ShuffleCorruptionException extends CorruptBlockException {
  private static final long serialVersionUID = 1L;

  /**
   * @param blockIndex the block's position in its stream (0 for the first), or -1 if unknown
   * @param blockOffset the stream offset of the block's first byte, or -1 if unknown
   */
  public ShuffleCorruptionException(String message, long blockIndex, long blockOffset) {
    super(message, blockIndex, blockOffset);
  }

  public ShuffleCorruptionException(
      String message, long blockIndex, long blockOffset, Throwable cause) {
    super(message, blockIndex, blockOffset, cause);
  }
}
