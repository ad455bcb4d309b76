package dev.quiver.io;

import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.WritableByteChannel;

/**
 * A {@link WritableByteChannel} over an {@link OutputStream} that writes in pieces of up to {@link
 * PiecewiseReads#PIECE_SIZE} bytes: straight from the source's backing array when it has one,
 * through the thread's staging array otherwise (Arrow's buffers are direct). The JDK's channel
 * copies direct buffers 8 KiB at a time.
 */
@Public
public final class PiecewiseOutputChannel implements WritableByteChannel {

  private final OutputStream out;
  private boolean open = true;

  public PiecewiseOutputChannel(OutputStream out) {
    this.out = out;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    if (!open) {
      throw new ClosedChannelException();
    }
    int total = src.remaining();
    if (src.hasArray()) {
      out.write(src.array(), src.arrayOffset() + src.position(), total);
      src.position(src.limit());
      return total;
    }
    byte[] piece = PiecewiseReads.threadPiece();
    while (src.hasRemaining()) {
      int n = Math.min(src.remaining(), piece.length);
      src.get(piece, 0, n);
      out.write(piece, 0, n);
    }
    return total;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() throws IOException {
    if (open) {
      open = false;
      out.close();
    }
  }
}
