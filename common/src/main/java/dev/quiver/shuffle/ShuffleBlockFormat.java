package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import org.apache.arrow.util.Preconditions;

/** Sizes of the shuffle block format (see the {@linkplain dev.quiver.shuffle package docs}). */
@Public
public final class ShuffleBlockFormat {

  /** The leading u64 that gives the length of the rest of the block. */
  public static final int LENGTH_FIELD_BYTES = 8;

  /** The u64 field count. */
  public static final int FIELD_COUNT_BYTES = 8;

  /** The codec tag. */
  public static final int TAG_BYTES = 4;

  /**
   * The part of a block's length that comes before the body: field count and codec tag. No valid
   * block has a length below this.
   */
  public static final int HEADER_BYTES = FIELD_COUNT_BYTES + TAG_BYTES;

  /**
   * The default (and largest allowed) maximum block length: 2 GiB - 1. The body is read into one
   * buffer, which Java indexes with an {@code int}.
   */
  public static final long DEFAULT_MAX_BLOCK_LENGTH = Integer.MAX_VALUE;

  private ShuffleBlockFormat() {}

  /** Checks a reader's configured maximum block length. */
  static long checkMaxBlockLength(long maxBlockLength) {
    Preconditions.checkArgument(
        maxBlockLength >= HEADER_BYTES && maxBlockLength <= DEFAULT_MAX_BLOCK_LENGTH,
        "maxBlockLength must be between %s and %s, got %s",
        HEADER_BYTES,
        DEFAULT_MAX_BLOCK_LENGTH,
        maxBlockLength);
    return maxBlockLength;
  }
}
