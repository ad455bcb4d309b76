package dev.quiver.codec;

import dev.quiver.annotation.Public;
import dev.quiver.io.CorruptInputException;

/**
 * Bytes that are not valid Snappy as Spark's snappy codec or the Snappy framing format writes it: a
 * length that does not parse or that the chunk may not claim, data that does not decompress to its
 * declared length, or a checksum mismatch. The message names the chunk and where it starts.
 */
@Public
public class SnappyFormatException extends CorruptInputException {
  private static final long serialVersionUID = 1L;

  public SnappyFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
