package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.io.CorruptInputException;

/**
 * A shuffle block that cannot be valid: a hostile or impossible length, an unknown codec tag, a
 * field count that disagrees with the body, or a body that does not decode. The message names the
 * block and where it starts; {@link #blockIndex()} and {@link #blockOffset()} give the same as
 * numbers.
 */
@Public
public class ShuffleCorruptionException extends CorruptInputException {
  private static final long serialVersionUID = 1L;

  private final long blockIndex;
  private final long blockOffset;

  /**
   * @param blockIndex the block's position in its stream (0 for the first), or -1 if unknown
   * @param blockOffset the stream offset of the block's first byte, or -1 if unknown
   */
  public ShuffleCorruptionException(String message, long blockIndex, long blockOffset) {
    super(message);
    this.blockIndex = blockIndex;
    this.blockOffset = blockOffset;
  }

  public ShuffleCorruptionException(
      String message, long blockIndex, long blockOffset, Throwable cause) {
    super(message, cause);
    this.blockIndex = blockIndex;
    this.blockOffset = blockOffset;
  }

  /** The corrupt block's position in its stream (0 for the first), or -1 if unknown. */
  public long blockIndex() {
    return blockIndex;
  }

  /** The stream offset of the corrupt block's first byte, or -1 if unknown. */
  public long blockOffset() {
    return blockOffset;
  }
}
