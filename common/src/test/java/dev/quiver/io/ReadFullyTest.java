package dev.quiver.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.quiver.testing.Bytes;
import dev.quiver.testing.TrickleInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@code readFully} stops short only at end of stream, whatever the stream's read sizes. */
class ReadFullyTest {

  private static final int SIZE = 3 * PiecewiseReads.PIECE_SIZE + 17;
  private final byte[] data = Bytes.random(SIZE, 11);

  @Test
  void fillsHeapAndDirectBuffersAcrossPieces() throws IOException {
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocate(SIZE), ByteBuffer.allocateDirect(SIZE)}) {
      assertEquals(SIZE, PiecewiseReads.readFully(new ByteArrayInputStream(data), dst));
      assertEquals(ByteBuffer.wrap(data), dst.flip());
    }
  }

  @Test
  void fillsFromOneByteShortReads() throws IOException {
    int size = 5000;
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocate(size), ByteBuffer.allocateDirect(size)}) {
      InputStream in = new TrickleInputStream(new ByteArrayInputStream(data, 0, size));
      assertEquals(size, PiecewiseReads.readFully(in, dst), "short reads are not the end");
      assertEquals(ByteBuffer.wrap(data, 0, size), dst.flip());
    }
    byte[] dst = new byte[size + 10];
    InputStream in = new TrickleInputStream(new ByteArrayInputStream(data, 0, size));
    assertEquals(size, PiecewiseReads.readFully(in, dst, 10, size));
    assertArrayEquals(Arrays.copyOf(data, size), Arrays.copyOfRange(dst, 10, size + 10));
  }

  @Test
  void stopsShortOnlyAtEndOfStream() throws IOException {
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocate(SIZE + 100), ByteBuffer.allocateDirect(SIZE + 100)}) {
      InputStream in = new TrickleInputStream(new ByteArrayInputStream(data));
      assertEquals(SIZE, PiecewiseReads.readFully(in, dst));
      assertEquals(SIZE, dst.position());
      assertEquals(0, PiecewiseReads.readFully(in, dst), "at end of stream nothing more comes");
    }
    byte[] dst = new byte[SIZE + 100];
    assertEquals(
        SIZE, PiecewiseReads.readFully(new ByteArrayInputStream(data), dst, 0, SIZE + 100));
  }

  @Test
  void readsOnlyWhatTheBufferHasRoomFor() throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(data);
    ByteBuffer dst = ByteBuffer.allocate(100);
    dst.position(40);
    assertEquals(60, PiecewiseReads.readFully(in, dst));
    assertEquals(SIZE - 60, in.available(), "no byte past the buffer's room is consumed");
    assertEquals(0, PiecewiseReads.readFully(in, dst), "a full buffer reads nothing");
    assertEquals(0, PiecewiseReads.readFully(in, new byte[5], 0, 0));
  }
}
