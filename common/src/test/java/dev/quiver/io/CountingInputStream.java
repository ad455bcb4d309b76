package dev.quiver.io;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Wraps a stream and records how it is used: {@code available()} calls, the largest single read
 * asked for, whether it was closed. Reads pass through unchanged.
 */
public final class CountingInputStream extends FilterInputStream {

  private int availableCalls;
  private int largestRead;
  private int reads;
  private boolean closed;

  public CountingInputStream(InputStream in) {
    super(in);
  }

  @Override
  public int available() throws IOException {
    availableCalls++;
    return super.available();
  }

  @Override
  public int read() throws IOException {
    record(1);
    return super.read();
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    record(len);
    return super.read(b, off, len);
  }

  @Override
  public void close() throws IOException {
    closed = true;
    super.close();
  }

  private void record(int len) {
    reads++;
    largestRead = Math.max(largestRead, len);
  }

  public int availableCalls() {
    return availableCalls;
  }

  /** The largest length passed to one read call. */
  public int largestRead() {
    return largestRead;
  }

  public int reads() {
    return reads;
  }

  public boolean isClosed() {
    return closed;
  }
}
