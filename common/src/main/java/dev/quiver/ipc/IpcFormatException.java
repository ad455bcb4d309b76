package dev.quiver.ipc;

import dev.quiver.annotation.Public;
import dev.quiver.io.CorruptInputException;

/** Bytes that are not a valid Arrow IPC stream, or one that Quiver cannot decode. */
@Public
public class IpcFormatException extends CorruptInputException {
  private static final long serialVersionUID = 1L;

  public IpcFormatException(String message) {
    super(message);
  }

  public IpcFormatException(String message, Throwable cause) {
    super(message, cause);
  }

  /** This failure as seen from {@code what}: its message prefixed, itself the cause. */
  IpcFormatException within(String what) {
    return new IpcFormatException(what + ": " + getMessage(), this);
  }
}
