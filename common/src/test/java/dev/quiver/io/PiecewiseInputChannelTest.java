package dev.quiver.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.Bytes;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.TrickleInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PiecewiseInputChannelTest {

  /** More than two pieces, and not a multiple of the piece size. */
  private static final int SIZE = 2 * PiecewiseReads.PIECE_SIZE + 12345;

  private final byte[] data = Bytes.random(SIZE, 7);

  @AfterEach
  void clearInterrupt() {
    // A failed interrupt test must not leave the flag set for the next test on this thread.
    Thread.interrupted();
  }

  @Test
  void readsStreamLargerThanOnePieceIntoHeapBuffer() throws IOException {
    assertReadsEverything(new ByteArrayInputStream(data), ByteBuffer.allocate(SIZE));
  }

  @Test
  void readsStreamLargerThanOnePieceIntoDirectBuffer() throws IOException {
    assertReadsEverything(new ByteArrayInputStream(data), ByteBuffer.allocateDirect(SIZE));
  }

  @Test
  void readsOneByteShortReadsIntoHeapAndDirectBuffers() throws IOException {
    byte[] small = Bytes.random(1000, 8);
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocate(1000), ByteBuffer.allocateDirect(1000)}) {
      try (PiecewiseInputChannel channel =
          new PiecewiseInputChannel(new TrickleInputStream(new ByteArrayInputStream(small)))) {
        assertEquals(1, channel.read(dst), "a short read is passed on, not retried");
        while (dst.hasRemaining()) {
          assertEquals(1, channel.read(dst));
        }
        assertEquals(-1, channel.read(ByteBuffer.allocate(1)));
      }
      assertEquals(ByteBuffer.wrap(small), dst.flip());
    }
  }

  @Test
  void oneReadNeverExceedsOnePiece() throws IOException {
    try (PiecewiseInputChannel channel =
        new PiecewiseInputChannel(new ByteArrayInputStream(data))) {
      assertEquals(PiecewiseReads.PIECE_SIZE, channel.read(ByteBuffer.allocate(SIZE)));
      assertEquals(PiecewiseReads.PIECE_SIZE, channel.read(ByteBuffer.allocateDirect(SIZE)));
    }
  }

  @Test
  void fullDestinationReadsNothing() throws IOException {
    try (PiecewiseInputChannel channel =
        new PiecewiseInputChannel(new ByteArrayInputStream(data))) {
      assertEquals(0, channel.read(ByteBuffer.allocate(0)));
    }
  }

  @Test
  void interruptedThreadGetsClosedByInterruptAndChannelCloses() {
    CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(data));
    PiecewiseInputChannel channel = new PiecewiseInputChannel(in);
    Thread.currentThread().interrupt();
    assertThrows(ClosedByInterruptException.class, () -> channel.read(ByteBuffer.allocate(10)));
    assertTrue(Thread.currentThread().isInterrupted(), "the interrupt flag stays set, as in NIO");
    assertFalse(channel.isOpen());
    assertTrue(in.isClosed(), "closing the channel closes the stream");
    assertEquals(0, in.counts().reads(), "nothing is read once interrupted");
  }

  @Test
  void closedChannelThrowsClosedChannelException() throws IOException {
    CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(data));
    PiecewiseInputChannel channel = new PiecewiseInputChannel(in);
    assertTrue(channel.isOpen());
    channel.close();
    channel.close(); // idempotent
    assertFalse(channel.isOpen());
    assertTrue(in.isClosed());
    assertThrows(ClosedChannelException.class, () -> channel.read(ByteBuffer.allocate(10)));
  }

  private static void assertReadsEverything(InputStream in, ByteBuffer dst) throws IOException {
    try (PiecewiseInputChannel channel = new PiecewiseInputChannel(in)) {
      int reads = 0;
      while (dst.hasRemaining()) {
        int n = channel.read(dst);
        assertTrue(n > 0 && n <= PiecewiseReads.PIECE_SIZE, "read " + n);
        reads++;
      }
      assertEquals(3, reads, "two full pieces and the rest");
      assertEquals(-1, channel.read(ByteBuffer.allocate(1)));
    }
  }
}
