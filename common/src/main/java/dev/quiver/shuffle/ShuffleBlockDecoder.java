package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.task.TaskScope;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.util.Preconditions;
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
public final class ShuffleBlockDecoder extends BlockReader {

  private final BufferAllocator allocator;

  /** Guards {@link #root}, which a close from another thread releases. */
  private final Object rootLock = new Object();

  private VectorSchemaRoot root;

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
    super(in, task, maxBlockLength, source, false);
    this.allocator = Preconditions.checkNotNull(allocator, "allocator");
    closeWhenTaskCompletes();
  }

  /**
   * The current batch; owned by this decoder, closed by the next {@link #next()} and by {@link
   * #close()}.
   */
  public VectorSchemaRoot root() {
    VectorSchemaRoot current;
    synchronized (rootLock) {
      current = root;
    }
    requireCurrent(current != null);
    return current;
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

  /**
   * Decodes the body into the current batch. Refuses (as corruption) a body that does not decode,
   * whose schema has another number of fields than the header, or that holds other than one batch
   * or carries dictionaries.
   */
  @Override
  void accept(ByteBuffer body) throws IOException {
    VectorSchemaRoot decoded = decode(body);
    synchronized (rootLock) {
      if (state() != State.CLOSED) {
        root = decoded;
        return;
      }
    }
    decoded.close();
    throw new IOException(
        "Decoder closed while reading " + blocks.where() + "; the batch was released");
  }

  @Override
  void releaseCurrent() {
    VectorSchemaRoot previous;
    synchronized (rootLock) {
      previous = root;
      root = null;
    }
    if (previous != null) {
      previous.close();
    }
  }

  @Override
  String kind() {
    return "decoder";
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
        ShuffleCorruptionException corrupt =
            blocks.corrupt("the body's batch does not load: " + e, e);
        AutoCloseables.close(corrupt, loaded);
        throw corrupt;
      }
    }
  }
}
