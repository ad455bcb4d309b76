package dev.quiver.io;

import dev.quiver.annotation.Public;
import java.io.IOException;

/**
 * Bytes Quiver refused as corrupt, truncated or hostile. Every refusal of bad input by Quiver's
 * decoders is one of its subclasses, whose message says what was read and where: catch this type to
 * handle them all.
 */
@Public
public abstract class CorruptInputException extends IOException {
  private static final long serialVersionUID = 1L;

  protected CorruptInputException(String message) {
    super(message);
  }

  protected CorruptInputException(String message, Throwable cause) {
    super(message, cause);
  }
}
