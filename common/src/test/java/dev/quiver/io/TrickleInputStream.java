package dev.quiver.io;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Returns at most one byte per read: the shortest reads a stream may legally give. */
public final class TrickleInputStream extends FilterInputStream {

  public TrickleInputStream(InputStream in) {
    super(in);
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    return super.read(b, off, Math.min(len, 1));
  }
}
