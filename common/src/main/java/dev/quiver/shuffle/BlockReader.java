package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.util.AutoCloseables;

/**
 * What the decoder and the raw-block iterator share: one walk over a stream of blocks ({@link
 * #next()}), one state, one way to close ({@link #close()}). Only Quiver subclasses it: its
 * constructor and hooks are package-private.
 *
 * <p>{@link #next()} reads a block's header, lets the subclass refuse it before its body is read
 * ({@code checkHeader()}), reads the body and hands it to the subclass ({@code
 * accept(ByteBuffer)}), which makes it the current block.
 *
 * <p>Only {@link #close()} may come from another thread (to stop a stalled read, by closing the
 * stream), so only the move to {@code State.CLOSED} races with the reader's own moves; the state is
 * an atomic reference and a close always wins.
 */
@Public
public abstract class BlockReader implements Closeable {

  /**
   * The life of a reader: OPEN while blocks may follow; ENDED once the stream ended at a block
   * boundary; FAILED once a read failed partway (the stream position is then unknown, so nothing
   * more is read); CLOSED from any of them, for good.
   */
  enum State {
    OPEN,
    ENDED,
    FAILED,
    CLOSED;

    boolean canMoveTo(State next) {
      switch (this) {
        case OPEN:
          return next == ENDED || next == FAILED || next == CLOSED;
        case ENDED:
        case FAILED:
          return next == CLOSED;
        default:
          return false;
      }
    }
  }

  final BlockStream blocks;
  private final TaskScope task;
  private final BodyBuffer buffer;
  private final AtomicReference<State> state = new AtomicReference<>(State.OPEN);

  /** What moved this reader to FAILED; set before the move. */
  private volatile Throwable failure;

  /**
   * @param directBody whether bodies are read into a direct buffer (for native engines) or a heap
   *     one
   */
  BlockReader(
      InputStream in, TaskScope task, long maxBlockLength, String source, boolean directBody) {
    this.blocks = new BlockStream(in, maxBlockLength, source);
    this.task = task;
    this.buffer = new BodyBuffer(directBody);
  }

  /**
   * Has the task's completion close this reader. Each subclass calls it last in its constructor: a
   * task that has already completed runs the listener at once, and it must find a whole reader.
   */
  final void closeWhenTaskCompletes() {
    if (task != null) {
      task.onCompletion(this::closeUnchecked);
    }
  }

  /**
   * Before the body is read: refuses a block this reader cannot take, so that it costs no
   * allocation. The header is in {@link #blocks}.
   */
  void checkHeader() throws ShuffleCorruptionException {}

  /** Takes the current block's body (from position 0 to its end) as the current block. */
  abstract void accept(ByteBuffer body) throws IOException;

  /**
   * Lets go of the current block, if any: at the start of each {@link #next()} and on close (which
   * may run on another thread while a read is in progress).
   */
  abstract void releaseCurrent();

  /** What the subclass is called in messages: "decoder", "iterator". */
  abstract String kind();

  /**
   * Lets go of the current block and reads the next one.
   *
   * @return false when the stream ends at a block boundary (and on every later call)
   * @throws EOFException if the stream ends anywhere else
   * @throws ShuffleCorruptionException if a header cannot be valid (nothing is allocated for it) or
   *     the reader refuses the block
   * @throws IOException if the reader is closed
   * @throws IllegalStateException if an earlier read failed
   */
  public final boolean next() throws IOException {
    State now = state.get();
    if (now == State.CLOSED) {
      throw closed();
    }
    if (now == State.FAILED) {
      throw failed();
    }
    releaseCurrent();
    if (now == State.ENDED) {
      return false;
    }
    if (task != null) {
      // Before any byte of the block is read: the stream position stays at a block boundary.
      task.throwIfKilled();
    }
    try {
      if (!blocks.nextHeader()) {
        moveTo(State.ENDED);
        return false;
      }
      checkHeader();
      accept(blocks.readBody(buffer));
      return true;
    } catch (Throwable t) {
      failure = t;
      moveTo(State.FAILED);
      throw t;
    }
  }

  /** Lets go of the current block, the body buffer and the stream. Idempotent, in every state. */
  @Override
  public final void close() throws IOException {
    if (!moveTo(State.CLOSED)) {
      return;
    }
    try {
      AutoCloseables.close(this::releaseCurrent, buffer::release, blocks.in());
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("Failed to close the " + kind() + " of " + blocks.describeStream(), e);
    }
  }

  State state() {
    return state.get();
  }

  /**
   * For the subclass's accessors: fails unless there is a current block ({@code present}), saying
   * why there is none.
   */
  final void requireCurrent(boolean present) {
    if (present) {
      return;
    }
    State now = state.get();
    switch (now) {
      case CLOSED:
        throw new IllegalStateException(
            "no current block: the " + kind() + " of " + blocks.describeStream() + " is closed");
      case FAILED:
        throw failed();
      case ENDED:
        throw new IllegalStateException(
            "no current block: " + blocks.describeStream() + " has ended");
      default:
        throw new IllegalStateException("no current block: call next() and check it returned true");
    }
  }

  /**
   * Moves to {@code next}. Returns false, and moves nowhere, if the reader is already closed: a
   * close from another thread wins over the reader's own move. Any other move the state machine
   * does not allow is a bug.
   */
  private boolean moveTo(State next) {
    while (true) {
      State now = state.get();
      if (now == State.CLOSED) {
        return false;
      }
      if (!now.canMoveTo(next)) {
        throw new IllegalStateException(
            "the "
                + kind()
                + " of "
                + blocks.describeStream()
                + " cannot move from "
                + now
                + " to "
                + next);
      }
      if (state.compareAndSet(now, next)) {
        return true;
      }
    }
  }

  private IOException closed() {
    return new IOException(
        "Cannot read " + blocks.describeStream() + ": the " + kind() + " is closed");
  }

  private IllegalStateException failed() {
    return new IllegalStateException(
        "Cannot read "
            + blocks.describeStream()
            + ": an earlier read failed ("
            + blocks.offset()
            + " bytes into the stream), so where the next block starts is unknown",
        failure);
  }

  private void closeUnchecked() {
    try {
      close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
