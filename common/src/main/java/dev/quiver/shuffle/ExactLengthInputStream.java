package dev.quiver.shuffle;

import dev.quiver.annotation.Internal;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import org.apache.arrow.util.Preconditions;

/**
 * A stream whose length is known, consumed exactly: it fails if the stream ends before that many
 * bytes, or if it holds more. Wrap the raw bytes of a shuffle segment with it, before any
 * decompression, decryption or block decoding: a segment cut at a block boundary (or at a boundary
 * of the codec's blocks) otherwise reads as fewer blocks with no error.
 *
 * <p>The end is checked when a read reaches it: a consumer that reads until end of stream (as the
 * block readers and Spark's codecs do) always triggers the check; one that stops early (a killed
 * task) does not, and closing is never an error.
 */
@Internal
public final class ExactLengthInputStream extends FilterInputStream {

  private final long expectedLength;
  private final String source;
  private long consumed;

  /**
   * @param in the bytes; closed with this stream
   * @param expectedLength how many bytes {@code in} must hold
   * @param source what {@code in} is, for error messages (e.g. "shuffle 3 map 38 reduce partition 5
   *     (local)"); not null
   */
  public ExactLengthInputStream(InputStream in, long expectedLength, String source) {
    super(Preconditions.checkNotNull(in, "in"));
    Preconditions.checkArgument(
        expectedLength >= 0, "expectedLength must be at least 0, got %s", expectedLength);
    this.expectedLength = expectedLength;
    this.source = Preconditions.checkNotNull(source, "source");
  }

  /** Bytes read so far. */
  public long consumed() {
    return consumed;
  }

  public long expectedLength() {
    return expectedLength;
  }

  @Override
  public int read() throws IOException {
    if (consumed == expectedLength) {
      checkEnd();
      return -1;
    }
    int b = in.read();
    if (b < 0) {
      throw shortSegment();
    }
    consumed++;
    return b;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    long remaining = expectedLength - consumed;
    if (remaining == 0) {
      checkEnd();
      return -1;
    }
    int n = in.read(b, off, (int) Math.min(len, remaining));
    if (n < 0) {
      throw shortSegment();
    }
    consumed += n;
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long skipped = in.skip(Math.max(0, Math.min(n, expectedLength - consumed)));
    consumed += skipped;
    return skipped;
  }

  @Override
  public int available() throws IOException {
    return (int) Math.min(in.available(), expectedLength - consumed);
  }

  @Override
  public boolean markSupported() {
    return false;
  }

  @Override
  public synchronized void mark(int readlimit) {}

  @Override
  public synchronized void reset() throws IOException {
    throw new IOException("mark/reset not supported");
  }

  /** All expected bytes are read: the stream must end here. */
  private void checkEnd() throws IOException {
    if (in.read() >= 0) {
      throw new ShuffleCorruptionException(
          String.format(
              "%s holds more than its expected %d bytes: the stream goes on past byte %d",
              capitalized(), expectedLength, expectedLength),
          -1,
          -1);
    }
  }

  private EOFException shortSegment() {
    return new EOFException(
        String.format(
            "%s ended after %d of its %d bytes (%d missing)",
            capitalized(), consumed, expectedLength, expectedLength - consumed));
  }

  private String capitalized() {
    return source.isEmpty()
        ? "Stream"
        : Character.toUpperCase(source.charAt(0)) + source.substring(1);
  }
}
