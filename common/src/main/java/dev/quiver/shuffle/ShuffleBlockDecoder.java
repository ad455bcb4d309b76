package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.task.TaskScope;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The JVM decode path: reads a stream of shuffle blocks and decodes each into one Arrow batch in
 * buffers of a given allocator.
 *
 * <p>The decoder owns the batch it returns: it closes it when the next block is read and on {@link
 * #close()}. A consumer that keeps a batch longer transfers its vectors out first.
 *
 * <pre>{@code
 * try (ShuffleBlockDecoder batches = new ShuffleBlockDecoder(in, allocator, task)) {
 *   while (batches.next()) {
 *     consume(batches.root());
 *   }
 * }
 * }</pre>
 *
 * <p>Not thread-safe, except that {@link #close()} may be called from another thread to stop a read
 * that is stalled (it closes the stream; the read then fails and releases what it held).
 */
@Public
public final class ShuffleBlockDecoder implements Closeable {

  private final BlockStream blocks;
  private final BufferAllocator allocator;
  private final TaskScope task;
  private final BodyBuffer buffer = new BodyBuffer(false);

  private final AtomicBoolean closed = new AtomicBoolean();
  private final Object rootLock = new Object();
  private VectorSchemaRoot root;
  private boolean ended;
  private boolean failed;

  /** Decodes {@code in} into {@code allocator}, with no task and the default maximum length. */
  public ShuffleBlockDecoder(InputStream in, BufferAllocator allocator) {
    this(in, allocator, null, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, null);
  }

  /**
   * Decodes {@code in} into {@code allocator} for {@code task}, with the default maximum length.
   */
  public ShuffleBlockDecoder(InputStream in, BufferAllocator allocator, TaskScope task) {
    this(in, allocator, task, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, null);
  }

  /**
   * @param in the blocks; this decoder closes it
   * @param allocator owns the decoded batches' buffers
   * @param task if not null: a killed task stops at the next block, and the task's completion
   *     closes this decoder (its stream and its current batch)
   * @param maxBlockLength the largest block length accepted, at most {@link
   *     ShuffleBlockFormat#DEFAULT_MAX_BLOCK_LENGTH}; a longer one is corruption
   * @param source what {@code in} is, for error messages; may be null
   */
  public ShuffleBlockDecoder(
      InputStream in,
      BufferAllocator allocator,
      TaskScope task,
      long maxBlockLength,
      String source) {
    if (allocator == null) {
      throw new NullPointerException("allocator");
    }
    this.blocks = new BlockStream(in, maxBlockLength, source);
    this.allocator = allocator;
    this.task = task;
    if (task != null) {
      task.onCompletion(this::closeUnchecked);
    }
  }

  /**
   * Closes the current batch and decodes the next block into {@link #root()}.
   *
   * @return false when the stream ends at a block boundary
   * @throws EOFException if the stream ends anywhere else
   * @throws ShuffleCorruptionException if a header cannot be valid (nothing is allocated for it),
   *     the body does not decode, or its schema has a different number of fields than the header
   */
  public boolean next() throws IOException {
    if (closed.get()) {
      throw new IOException("Cannot read " + blocks.describeStream() + ": the decoder is closed");
    }
    if (failed) {
      throw new IllegalStateException("an earlier read failed; the stream position is unknown");
    }
    closeCurrent();
    if (ended) {
      return false;
    }
    if (task != null) {
      // Before any byte of the block is read: the stream position stays at a block boundary.
      task.throwIfKilled();
    }
    boolean ok = false;
    try {
      if (!blocks.nextHeader()) {
        ended = true;
      } else {
        publish(decode(blocks.readBody(buffer)));
      }
      ok = true;
      return !ended;
    } finally {
      failed = !ok;
    }
  }

  /** The current batch; owned by this decoder, closed by the next {@link #next()}. */
  public VectorSchemaRoot root() {
    synchronized (rootLock) {
      if (root == null) {
        throw new IllegalStateException("no current batch: call next() and check it returned true");
      }
      return root;
    }
  }

  /** The codec of the current batch's block. */
  public BlockCodec codec() {
    root();
    return blocks.codec();
  }

  /** The current batch's block position in the stream: 0 for the first. */
  public long blockIndex() {
    root();
    return blocks.blockIndex();
  }

  /** The stream offset of the current batch's block. */
  public long blockOffset() {
    root();
    return blocks.blockOffset();
  }

  private VectorSchemaRoot decode(ByteBuffer body) throws IOException {
    DecodedStream decoded;
    try {
      decoded =
          ArrowIpc.decode(
              new ByteArrayInputStream(body.array(), body.arrayOffset(), body.remaining()),
              body.remaining(),
              blocks.codec(),
              allocator,
              "block body");
    } catch (IpcFormatException e) {
      throw blocks.corrupt("the " + blocks.codec() + " body does not decode: " + e.getMessage(), e);
    }
    try (DecodedStream stream = decoded) {
      int fields = stream.schema().getFields().size();
      if (fields != blocks.fieldCount()) {
        throw blocks.corrupt(
            "the header declares "
                + blocks.fieldCount()
                + " fields but the body's schema has "
                + fields,
            null);
      }
      if (stream.batches().size() != 1) {
        throw blocks.corrupt(
            "the body holds " + stream.batches().size() + " record batches instead of one", null);
      }
      if (stream.hasDictionaries()) {
        throw blocks.corrupt(
            "the body carries dictionaries, which shuffle blocks do not use", null);
      }
      VectorSchemaRoot loaded = VectorSchemaRoot.create(stream.schema(), allocator);
      try {
        new VectorLoader(loaded).load(stream.batches().get(0));
        return loaded;
      } catch (RuntimeException e) {
        loaded.close();
        throw blocks.corrupt("the body's batch does not load: " + e, e);
      }
    }
  }

  private void publish(VectorSchemaRoot decoded) throws IOException {
    synchronized (rootLock) {
      if (!closed.get()) {
        root = decoded;
        return;
      }
    }
    decoded.close();
    throw new IOException(
        "Decoder closed while reading " + blocks.where() + "; the batch was released");
  }

  private void closeCurrent() {
    VectorSchemaRoot previous;
    synchronized (rootLock) {
      previous = root;
      root = null;
    }
    if (previous != null) {
      previous.close();
    }
  }

  /** Closes the current batch and the stream. Idempotent. */
  @Override
  public void close() throws IOException {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      closeCurrent();
      buffer.release();
    } finally {
      blocks.in().close();
    }
  }

  private void closeUnchecked() {
    try {
      close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
