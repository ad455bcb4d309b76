package dev.quiver.shuffle;

import dev.quiver.annotation.Internal;
import dev.quiver.io.BufferReadable;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.arrow.util.Preconditions;

/**
 * One segment of a file (a map output's partition in Spark's shuffle data file), read through a
 * {@link FileChannel} at explicit positions, so that a direct destination is filled by the kernel
 * itself: the raw-block iterator's body buffer gets each body in one read, with no heap array in
 * between ({@link BufferReadable}). Reads into a heap array go through the channel too (the JDK
 * stages them through its own cached direct buffer, as {@code FileInputStream} stages through
 * native memory).
 *
 * <p>A file that ends before the segment does is an {@link EOFException} naming the file, the
 * segment and the offset where it ended. A read on an interrupted thread fails with {@code
 * ClosedByInterruptException}, as every {@link FileChannel} read does.
 */
@Internal
public final class FileSegmentInputStream extends InputStream implements BufferReadable {

  private final FileChannel channel;
  private final Closeable alsoClose;
  private final Path file;
  private final long start;
  private final long end;
  private final String source;
  private long position;

  private FileSegmentInputStream(
      FileChannel channel, Closeable alsoClose, Path file, long start, long end, String source) {
    this.channel = channel;
    this.alsoClose = alsoClose;
    this.file = file;
    this.start = start;
    this.end = end;
    this.source = source;
    this.position = start;
  }

  /**
   * Opens {@code length} bytes of {@code file} from {@code start}.
   *
   * @param source what the segment is, for error messages; not null
   * @param alsoClose closed with this stream (another stream of the same bytes that this one
   *     replaces); may be null
   */
  public static FileSegmentInputStream open(
      Path file, long start, long length, String source, Closeable alsoClose) throws IOException {
    Preconditions.checkNotNull(file, "file");
    Preconditions.checkNotNull(source, "source");
    Preconditions.checkArgument(start >= 0, "start must be at least 0, got %s", start);
    Preconditions.checkArgument(length >= 0, "length must be at least 0, got %s", length);
    Preconditions.checkArgument(
        length <= Long.MAX_VALUE - start, "start %s + length %s overflows", start, length);
    FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
    return new FileSegmentInputStream(channel, alsoClose, file, start, start + length, source);
  }

  /** Bytes of the segment not read yet. */
  private long remaining() {
    return end - position;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    Preconditions.checkPositionIndexes(off, off + len, b.length);
    return read(ByteBuffer.wrap(b, off, len));
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (!dst.hasRemaining()) {
      return 0;
    }
    long left = remaining();
    if (left == 0) {
      return -1;
    }
    ByteBuffer view = dst.duplicate();
    view.limit(view.position() + (int) Math.min(view.remaining(), left));
    int n = channel.read(view, position);
    if (n < 0) {
      throw new EOFException(
          String.format(
              "%s ended at byte %d, inside %s (file bytes %d to %d): %d of its %d bytes read",
              file, position, source, start, end, position - start, end - start));
    }
    dst.position(view.position());
    position += n;
    return n;
  }

  @Override
  public long skip(long n) {
    long skipped = Math.max(0, Math.min(n, remaining()));
    position += skipped;
    return skipped;
  }

  @Override
  public int available() {
    return (int) Math.min(remaining(), Integer.MAX_VALUE);
  }

  @Override
  public void close() throws IOException {
    try {
      if (alsoClose != null) {
        alsoClose.close();
      }
    } finally {
      channel.close();
    }
  }
}
