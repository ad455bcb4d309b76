package dev.quiver.testing;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Passes reads through unchanged and records how a reader uses the stream: {@code available()}
 * calls, read calls, the bytes they returned, the largest length one read asked for and the largest
 * it got, and whether the stream was closed. Several streams can add to one {@link Counts} (every
 * stream a codec opens, every stream of a job), from any thread.
 */
public final class CountingInputStream extends FilterInputStream {

  /** What the streams sharing it were asked for and gave. */
  public static final class Counts {
    private final AtomicLong availableCalls = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong largestRequested = new AtomicLong();
    private final AtomicLong largestReturned = new AtomicLong();

    public long availableCalls() {
      return availableCalls.get();
    }

    /** Calls of {@code read} (of any form; {@code skip} is not one). */
    public long reads() {
      return reads.get();
    }

    /** Bytes the reads returned and {@code skip} passed over. */
    public long bytes() {
      return bytes.get();
    }

    /** The largest length passed to one read call (1 for {@code read()}). */
    public long largestRequested() {
      return largestRequested.get();
    }

    /** The most bytes one read call returned. */
    public long largestReturned() {
      return largestReturned.get();
    }

    public void reset() {
      for (AtomicLong count :
          new AtomicLong[] {availableCalls, reads, bytes, largestRequested, largestReturned}) {
        count.set(0);
      }
    }

    private void read(int requested, long returned) {
      reads.incrementAndGet();
      largestRequested.accumulateAndGet(requested, Math::max);
      if (returned > 0) {
        bytes.addAndGet(returned);
        largestReturned.accumulateAndGet(returned, Math::max);
      }
    }

    @Override
    public String toString() {
      return String.format(
          "%d reads (%d bytes, largest asked %d, largest returned %d), %d available() calls",
          reads(), bytes(), largestRequested(), largestReturned(), availableCalls());
    }
  }

  private final Counts counts;
  private volatile boolean closed;

  /** Counts of its own. */
  public CountingInputStream(InputStream in) {
    this(in, new Counts());
  }

  /** Adds to {@code counts}. */
  public CountingInputStream(InputStream in, Counts counts) {
    super(in);
    this.counts = counts;
  }

  public Counts counts() {
    return counts;
  }

  public boolean isClosed() {
    return closed;
  }

  @Override
  public int available() throws IOException {
    counts.availableCalls.incrementAndGet();
    return in.available();
  }

  @Override
  public int read() throws IOException {
    int b = in.read();
    counts.read(1, b < 0 ? -1 : 1);
    return b;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    int n = in.read(b, off, len);
    counts.read(len, n);
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long skipped = in.skip(n);
    counts.bytes.addAndGet(Math.max(skipped, 0));
    return skipped;
  }

  @Override
  public void close() throws IOException {
    closed = true;
    in.close();
  }
}
