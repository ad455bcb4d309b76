package dev.quiver.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.Bytes;
import dev.quiver.testing.CountingInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The reason the readers exist: they read in pieces larger than the JDK channel's 8 KiB, capped at
 * 64 KiB, and never ask the stream for {@code available()}, which the JDK channel does.
 */
class ReadPieceSizeTest {

  private static final int SIZE = 1024 * 1024;
  private static final int JDK_CHANNEL_PIECE = 8 * 1024;
  private final byte[] data = Bytes.random(SIZE, 42);

  @Test
  void piecewiseInputChannelReadsLargePiecesWithoutAvailable() throws IOException {
    ByteBuffer dst = ByteBuffer.allocate(SIZE);
    CountingInputStream counting = drainThrough(PiecewiseInputChannel::new, dst);
    assertArrayEquals(data, dst.array());
    assertPiecesAreLargeAndNoAvailableCalls(counting);
  }

  @Test
  void piecewiseInputChannelIntoDirectBufferReadsLargePiecesWithoutAvailable() throws IOException {
    ByteBuffer dst = ByteBuffer.allocateDirect(SIZE);
    CountingInputStream counting = drainThrough(PiecewiseInputChannel::new, dst);
    assertEquals(ByteBuffer.wrap(data), dst.flip());
    assertPiecesAreLargeAndNoAvailableCalls(counting);
  }

  @Test
  void readFullyIntoBuffersReadsLargePiecesWithoutAvailable() throws IOException {
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocate(SIZE), ByteBuffer.allocateDirect(SIZE)}) {
      CountingInputStream counting = new CountingInputStream(new ByteArrayInputStream(data));
      assertEquals(SIZE, PiecewiseReads.readFully(counting, dst));
      assertEquals(ByteBuffer.wrap(data), dst.flip());
      assertPiecesAreLargeAndNoAvailableCalls(counting);
    }
  }

  @Test
  void readFullyIntoArrayReadsLargePiecesWithoutAvailable() throws IOException {
    CountingInputStream counting = new CountingInputStream(new ByteArrayInputStream(data));
    byte[] dst = new byte[SIZE];
    assertEquals(SIZE, PiecewiseReads.readFully(counting, dst, 0, SIZE));
    assertArrayEquals(data, dst);
    assertPiecesAreLargeAndNoAvailableCalls(counting);
  }

  /** Proves the counter works: the JDK's channel asks for available() and reads 8 KiB at most. */
  @Test
  void jdkChannelCallsAvailableAndReadsSmallPieces() throws IOException {
    ByteBuffer dst = ByteBuffer.allocate(SIZE);
    CountingInputStream counting = drainThrough(Channels::newChannel, dst);
    assertArrayEquals(data, dst.array());
    assertTrue(counting.counts().availableCalls() > 0, "JDK channel should call available()");
    assertTrue(
        counting.counts().largestRequested() <= JDK_CHANNEL_PIECE,
        "largest " + counting.counts().largestRequested());
  }

  /**
   * Reads {@link #data} to its end into {@code dst} through the channel {@code open} makes of the
   * stream, and returns the counts of the calls the channel made on that stream.
   */
  private CountingInputStream drainThrough(
      Function<InputStream, ReadableByteChannel> open, ByteBuffer dst) throws IOException {
    CountingInputStream counting = new CountingInputStream(new ByteArrayInputStream(data));
    try (ReadableByteChannel channel = open.apply(counting)) {
      drain(channel, dst);
    }
    return counting;
  }

  private static void drain(ReadableByteChannel channel, ByteBuffer dst) throws IOException {
    while (dst.hasRemaining() && channel.read(dst) >= 0) {
      // keep reading
    }
    assertEquals(-1, channel.read(ByteBuffer.allocate(1)), "stream should be at its end");
  }

  private static void assertPiecesAreLargeAndNoAvailableCalls(CountingInputStream counting) {
    assertEquals(0, counting.counts().availableCalls(), "available() calls");
    assertTrue(
        counting.counts().largestRequested() > JDK_CHANNEL_PIECE,
        "largest read " + counting.counts().largestRequested());
    assertTrue(
        counting.counts().largestRequested() <= PiecewiseReads.PIECE_SIZE,
        "largest read " + counting.counts().largestRequested());
  }
}
