package dev.quiver.ipc;

import java.io.IOException;

/** Bytes that are not a valid Arrow IPC stream, or one that Quiver cannot decode. */
public class IpcFormatException extends IOException {
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
