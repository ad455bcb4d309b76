package dev.quiver.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The bytes {@code [start, end)} of a file, read with positional reads of the shared channel (which
 * this stream does not close), counting how far it has got.
 */
final class FileSegmentInputStream extends InputStream {

  private final FileChannel channel;
  private final long start;
  private final long end;
  private long position;

  FileSegmentInputStream(FileChannel channel, long start, long end) {
    this.channel = channel;
    this.start = start;
    this.end = end;
    this.position = start;
  }

  /** Bytes read from the segment so far. */
  long consumed() {
    return position - start;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xFF;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    long left = end - position;
    if (left <= 0) {
      return -1;
    }
    int n = channel.read(ByteBuffer.wrap(b, off, (int) Math.min(len, left)), position);
    if (n > 0) {
      position += n;
    }
    return n;
  }
}
