package dev.quiver.io;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.quiver.testing.Bytes;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import org.junit.jupiter.api.Test;

/**
 * A stream that writes into buffers itself is handed a direct destination whole, with no staging
 * copy; heap destinations still go to their arrays, and other streams still read through the
 * staging array.
 */
class BufferReadableTest {

  private static final int SIZE = 300 * 1024;
  private final byte[] data = Bytes.random(SIZE, 7);

  /** Serves {@code data}, counting the reads that came through each entry point. */
  private static final class CountingBufferReadable extends ByteArrayInputStream
      implements BufferReadable {
    int bufferReads;
    int arrayReads;

    CountingBufferReadable(byte[] data) {
      super(data);
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) {
      arrayReads++;
      return super.read(b, off, len);
    }

    @Override
    public synchronized int read(ByteBuffer dst) {
      bufferReads++;
      if (pos == count) {
        return -1;
      }
      int n = Math.min(dst.remaining(), count - pos);
      dst.put(buf, pos, n);
      pos += n;
      return n;
    }
  }

  @Test
  void aDirectDestinationIsHandedToTheStreamWhole() throws IOException {
    CountingBufferReadable in = new CountingBufferReadable(data);
    ByteBuffer dst = ByteBuffer.allocateDirect(SIZE);
    try (ReadableByteChannel channel = new PiecewiseInputChannel(in)) {
      // The whole destination in one read: no 64 KiB staging pieces.
      assertEquals(SIZE, channel.read(dst));
      assertEquals(-1, channel.read(ByteBuffer.allocateDirect(1)));
    }
    assertEquals(ByteBuffer.wrap(data), dst.flip());
    assertEquals(2, in.bufferReads);
    assertEquals(0, in.arrayReads);
  }

  @Test
  void aHeapDestinationIsReadIntoItsArray() throws IOException {
    CountingBufferReadable in = new CountingBufferReadable(data);
    ByteBuffer dst = ByteBuffer.allocate(SIZE);
    assertEquals(SIZE, PiecewiseReads.readFully(in, dst));
    assertEquals(ByteBuffer.wrap(data), dst.flip());
    assertEquals(0, in.bufferReads);
    assertEquals(SIZE / PiecewiseReads.PIECE_SIZE + 1, in.arrayReads);
  }
}
