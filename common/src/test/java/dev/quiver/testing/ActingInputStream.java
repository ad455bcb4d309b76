package dev.quiver.testing;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Passes reads through, at most {@code piece} bytes a call, and runs {@code action} after every
 * read that has brought the bytes read to {@code at} or more: for tests of what a reader does when
 * its thread is interrupted or its task killed part way through a stream.
 */
public final class ActingInputStream extends FilterInputStream {
  private final long at;
  private final int piece;
  private final Runnable action;
  private long position;

  public ActingInputStream(InputStream in, long at, int piece, Runnable action) {
    super(in);
    this.at = at;
    this.piece = piece;
    this.action = action;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    int n = super.read(b, off, Math.min(len, piece));
    if (n > 0) {
      position += n;
    }
    if (position >= at) {
      action.run();
    }
    return n;
  }
}
