package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.shuffle.BlockReader.State;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The one state machine behind both readers: which moves it allows, that a failure sticks and says
 * what failed, and that close releases everything from every state, once.
 */
class BlockReaderStateTest {

  /** The two readers, driven alike. */
  enum Reader {
    DECODER {
      @Override
      BlockReader open(InputStream in, BufferAllocator allocator, FakeTask task) {
        return new ShuffleBlockDecoder(in, allocator, task);
      }

      @Override
      Object current(BlockReader reader) {
        return ((ShuffleBlockDecoder) reader).root();
      }
    },
    RAW {
      @Override
      BlockReader open(InputStream in, BufferAllocator allocator, FakeTask task) {
        return new RawBlockIterator(in, task);
      }

      @Override
      Object current(BlockReader reader) {
        return ((RawBlockIterator) reader).body();
      }
    };

    abstract BlockReader open(InputStream in, BufferAllocator allocator, FakeTask task);

    /** The reader's accessor of its current block. */
    abstract Object current(BlockReader reader);
  }

  /** Where a reader is when it is closed. */
  enum Reached {
    OPEN_BEFORE_ANY_BLOCK,
    OPEN_ON_A_BLOCK,
    ENDED,
    FAILED,
    CLOSED
  }

  /** Two blocks of 10 and 20 rows. */
  private static byte[] twoBlocks() throws IOException {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot a = TestData.buildSide(allocator, 0, 10);
        VectorSchemaRoot b = TestData.buildSide(allocator, 10, 20)) {
      return Blocks.write(BlockCodec.LZ4, a, b);
    }
  }

  /** One whole block, then a second cut inside its body. */
  private static byte[] cutInTheSecondBlock() throws IOException {
    byte[] stream = twoBlocks();
    return Arrays.copyOf(stream, Blocks.boundaries(stream).get(1) + 30);
  }

  @Test
  void theStatesAllowOnlyTheirMoves() {
    assertEquals(
        EnumSet.of(State.ENDED, State.FAILED, State.CLOSED), allowedFrom(State.OPEN), "OPEN");
    assertEquals(EnumSet.of(State.CLOSED), allowedFrom(State.ENDED), "ENDED");
    assertEquals(EnumSet.of(State.CLOSED), allowedFrom(State.FAILED), "FAILED");
    assertEquals(EnumSet.noneOf(State.class), allowedFrom(State.CLOSED), "CLOSED");
  }

  private static Set<State> allowedFrom(State from) {
    Set<State> allowed = EnumSet.noneOf(State.class);
    for (State to : State.values()) {
      if (from.canMoveTo(to)) {
        allowed.add(to);
      }
    }
    return allowed;
  }

  @ParameterizedTest
  @EnumSource(Reader.class)
  void closeInEveryStateReleasesEverythingOnce(Reader kind) throws IOException {
    for (Reached reached : Reached.values()) {
      String what = kind + " closed when " + reached;
      try (BufferAllocator allocator = new RootAllocator()) {
        byte[] stream = reached == Reached.FAILED ? cutInTheSecondBlock() : twoBlocks();
        CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(stream));
        BlockReader reader = kind.open(in, allocator, null);
        State expected = reach(reader, reached);
        assertEquals(expected, reader.state(), what);
        if (reached == Reached.OPEN_ON_A_BLOCK && kind == Reader.DECODER) {
          assertTrue(allocator.getAllocatedMemory() > 0, what + ": the batch is held");
        }

        reader.close();
        assertEquals(State.CLOSED, reader.state(), what);
        assertTrue(in.isClosed(), what + ": the stream is closed");
        assertEquals(0, allocator.getAllocatedMemory(), what + ": nothing is held");
        reader.close(); // a second close does nothing

        IOException e = assertThrows(IOException.class, reader::next, what);
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        IllegalStateException noBlock =
            assertThrows(IllegalStateException.class, () -> kind.current(reader), what);
        assertTrue(noBlock.getMessage().contains("is closed"), noBlock.getMessage());
      }
    }
  }

  /** Brings a fresh reader of {@link #twoBlocks()} (or its cut copy, for FAILED) to {@code to}. */
  private static State reach(BlockReader reader, Reached to) throws IOException {
    switch (to) {
      case OPEN_BEFORE_ANY_BLOCK:
        return State.OPEN;
      case OPEN_ON_A_BLOCK:
        assertTrue(reader.next());
        return State.OPEN;
      case ENDED:
        assertTrue(reader.next());
        assertTrue(reader.next());
        assertFalse(reader.next());
        return State.ENDED;
      case FAILED:
        assertTrue(reader.next());
        assertThrows(EOFException.class, reader::next);
        return State.FAILED;
      default:
        reader.close();
        return State.CLOSED;
    }
  }

  @ParameterizedTest
  @EnumSource(Reader.class)
  void everyCallAfterAFailureFailsAndNamesIt(Reader kind) throws IOException {
    byte[] stream = twoBlocks();
    // The second block's codec tag, unknown: a corrupt header.
    int second = Blocks.boundaries(stream).get(1);
    System.arraycopy("LZ5_".getBytes(StandardCharsets.US_ASCII), 0, stream, second + 16, 4);
    try (BufferAllocator allocator = new RootAllocator()) {
      try (BlockReader reader = kind.open(new ByteArrayInputStream(stream), allocator, null)) {
        assertTrue(reader.next());
        ShuffleCorruptionException failure =
            assertThrows(ShuffleCorruptionException.class, reader::next);
        assertEquals(State.FAILED, reader.state());
        for (int call = 0; call < 2; call++) {
          IllegalStateException e = assertThrows(IllegalStateException.class, reader::next);
          assertSame(failure, e.getCause(), "the failure is kept as the cause");
          assertTrue(
              e.getMessage().contains("an earlier read failed (" + (second + 20) + " bytes into"),
              e.getMessage());
          IllegalStateException noBlock =
              assertThrows(IllegalStateException.class, () -> kind.current(reader));
          assertSame(failure, noBlock.getCause());
        }
        assertEquals(0, allocator.getAllocatedMemory(), "the first block was let go");
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Reader.class)
  void anEndedReaderStaysEnded(Reader kind) throws IOException {
    try (BufferAllocator allocator = new RootAllocator();
        BlockReader reader = kind.open(new ByteArrayInputStream(twoBlocks()), allocator, null)) {
      IllegalStateException before =
          assertThrows(IllegalStateException.class, () -> kind.current(reader));
      assertTrue(before.getMessage().contains("call next()"), before.getMessage());
      reach(reader, Reached.ENDED);
      assertFalse(reader.next(), "and again");
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> kind.current(reader));
      assertTrue(e.getMessage().contains("has ended"), e.getMessage());
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }

  /** A task that already completed runs its listener at once: on a whole reader. */
  @ParameterizedTest
  @EnumSource(Reader.class)
  void aReaderOpenedForACompletedTaskIsClosedAtOnce(Reader kind) throws IOException {
    FakeTask task = new FakeTask();
    task.complete();
    try (BufferAllocator allocator = new RootAllocator()) {
      CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(twoBlocks()));
      BlockReader reader = kind.open(in, allocator, task);
      assertEquals(State.CLOSED, reader.state());
      assertTrue(in.isClosed());
      assertThrows(IOException.class, reader::next);
      assertEquals(0, in.counts().reads(), "nothing was read");
    }
  }

  /** A stream that fails to close still leaves the batch and buffer released, and says so. */
  @ParameterizedTest
  @EnumSource(Reader.class)
  void aStreamFailingToCloseStillReleasesTheBlock(Reader kind) throws IOException {
    IOException closeFailure = new IOException("disk went away");
    InputStream in =
        new FilterInputStream(new ByteArrayInputStream(twoBlocks())) {
          @Override
          public void close() throws IOException {
            throw closeFailure;
          }
        };
    try (BufferAllocator allocator = new RootAllocator()) {
      BlockReader reader = kind.open(in, allocator, null);
      assertTrue(reader.next());
      assertSame(closeFailure, assertThrows(IOException.class, reader::close));
      assertEquals(State.CLOSED, reader.state());
      assertEquals(0, allocator.getAllocatedMemory());
      reader.close(); // closed already: the stream is not closed twice
    }
  }

  /** A kill stops the reader at a block boundary; it is not a failure of the stream. */
  @ParameterizedTest
  @EnumSource(Reader.class)
  void aKillLeavesTheReaderOpen(Reader kind) throws IOException {
    FakeTask task = new FakeTask();
    try (BufferAllocator allocator = new RootAllocator()) {
      BlockReader reader = kind.open(new ByteArrayInputStream(twoBlocks()), allocator, task);
      assertTrue(reader.next());
      task.kill("stage cancelled");
      assertThrows(FakeTask.KilledException.class, reader::next);
      assertEquals(State.OPEN, reader.state());
      task.complete();
      assertEquals(State.CLOSED, reader.state());
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }
}
