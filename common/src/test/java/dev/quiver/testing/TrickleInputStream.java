package dev.quiver.testing;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Returns at most a few bytes per read, as a slow network stream may: one byte per read is the
 * shortest a stream may legally give.
 */
public final class TrickleInputStream extends FilterInputStream {

  private final int most;

  /** At most one byte per read. */
  public TrickleInputStream(InputStream in) {
    this(in, 1);
  }

  /** At most {@code most} bytes per read. */
  public TrickleInputStream(InputStream in, int most) {
    super(in);
    if (most <= 0) {
      throw new IllegalArgumentException("most " + most);
    }
    this.most = most;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    return in.read(b, off, Math.min(len, most));
  }
}
