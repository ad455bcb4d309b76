package dev.quiver.io;

import dev.quiver.annotation.Public;

/**
 * A refusal of bytes framed in blocks (Spark's lz4 framing, shuffle blocks): the message names the
 * block and where it starts, and {@link #blockIndex()} and {@link #blockOffset()} give the same as
 * numbers. Each subclass says what its index counts and where its offset is measured from.
 */
@Public
public abstract class CorruptBlockException extends CorruptInputException {
  private static final long serialVersionUID = 1L;

  private final long blockIndex;
  private final long blockOffset;

  protected CorruptBlockException(String message, long blockIndex, long blockOffset) {
    super(message);
    this.blockIndex = blockIndex;
    this.blockOffset = blockOffset;
  }

  protected CorruptBlockException(
      String message, long blockIndex, long blockOffset, Throwable cause) {
    super(message, cause);
    this.blockIndex = blockIndex;
    this.blockOffset = blockOffset;
  }

  /** The bad block's position among the blocks (0 for the first), or -1 if unknown. */
  public long blockIndex() {
    return blockIndex;
  }

  /** The offset of the bad block's first byte, or -1 if unknown. */
  public long blockOffset() {
    return blockOffset;
  }
}
