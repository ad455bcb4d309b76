package dev.quiver.io;

import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ReadableByteChannel;

/**
 * A {@link ReadableByteChannel} over an {@link InputStream} that reads up to {@link
 * PiecewiseReads#PIECE_SIZE} bytes per call straight into the destination buffer.
 *
 * <p>It replaces {@code Channels.newChannel(InputStream)}, which copies at most 8 KiB per read and,
 * for any stream that is not a plain {@code FileInputStream}, calls {@code available()} before
 * every read after the first. Like the JDK's channel, a read on an interrupted thread closes the
 * channel and fails with {@link ClosedByInterruptException}, so a killed task stops reading.
 */
@Public
public final class PiecewiseInputChannel implements ReadableByteChannel {

  private final InputStream in;
  private volatile boolean open = true;

  public PiecewiseInputChannel(InputStream in) {
    this.in = in;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (!open) {
      throw new ClosedChannelException();
    }
    if (Thread.currentThread().isInterrupted()) {
      close();
      throw new ClosedByInterruptException();
    }
    return PiecewiseReads.readPiece(in, dst);
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() throws IOException {
    if (open) {
      open = false;
      in.close();
    }
  }
}
