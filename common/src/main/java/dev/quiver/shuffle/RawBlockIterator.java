package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.arrow.util.Preconditions;

/**
 * The direct-read path: walks a stream of shuffle blocks and hands each block's header and its
 * still-compressed body to an engine that decodes natively.
 *
 * <p>The body is in a direct {@link ByteBuffer} that is reused for every block and replaced by a
 * larger one only when a block does not fit. It is valid until the next call to {@link #next()} or
 * {@link #close()}; copy what must outlive that.
 *
 * <pre>{@code
 * try (RawBlockIterator blocks = new RawBlockIterator(in, task)) {
 *   while (blocks.next()) {
 *     engine.decode(blocks.codec(), blocks.fieldCount(), blocks.body());
 *   }
 * }
 * }</pre>
 *
 * <p>Not thread-safe, except that {@link #close()} may be called from another thread to stop a read
 * that is stalled (it closes the stream).
 */
@Public
public final class RawBlockIterator extends BlockReader {

  /** {@code expectedFieldCount} when the caller gives none. */
  public static final int ANY_FIELD_COUNT = -1;

  /**
   * The field count every block must declare: the caller's, or else the first block's. A native
   * engine decodes each body against one schema, so a block that declares another shape is corrupt
   * (the decoding path refuses it too, when it compares the header with the body's schema).
   */
  private int expectedFieldCount;

  private final boolean expectedFromCaller;
  private ByteBuffer body;

  /** Reads {@code in} with no task and the default maximum block length. */
  public RawBlockIterator(InputStream in) {
    this(in, null, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, null);
  }

  /** Reads {@code in} for {@code task}, with the default maximum block length. */
  public RawBlockIterator(InputStream in, TaskScope task) {
    this(in, task, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, null);
  }

  /**
   * @param in the blocks; this iterator closes it
   * @param task if not null: a killed task stops at the next block, and the task's completion
   *     closes this iterator
   * @param maxBlockLength the largest block length accepted, at most {@link
   *     ShuffleBlockFormat#DEFAULT_MAX_BLOCK_LENGTH}; a longer one is corruption
   * @param source what {@code in} is, for error messages; may be null
   */
  public RawBlockIterator(InputStream in, TaskScope task, long maxBlockLength, String source) {
    this(in, task, maxBlockLength, source, ANY_FIELD_COUNT);
  }

  /**
   * @param in the blocks; this iterator closes it
   * @param task if not null: a killed task stops at the next block, and the task's completion
   *     closes this iterator
   * @param maxBlockLength the largest block length accepted, at most {@link
   *     ShuffleBlockFormat#DEFAULT_MAX_BLOCK_LENGTH}; a longer one is corruption
   * @param source what {@code in} is, for error messages; may be null
   * @param expectedFieldCount the number of top-level fields of the schema the caller decodes the
   *     bodies with, or {@link #ANY_FIELD_COUNT}; either way every block must declare the same
   *     field count as the stream's first block
   */
  public RawBlockIterator(
      InputStream in, TaskScope task, long maxBlockLength, String source, int expectedFieldCount) {
    super(in, task, maxBlockLength, source, true);
    Preconditions.checkArgument(
        expectedFieldCount >= 0 || expectedFieldCount == ANY_FIELD_COUNT,
        "expectedFieldCount must be at least 0 or ANY_FIELD_COUNT, got %s",
        expectedFieldCount);
    this.expectedFieldCount = expectedFieldCount;
    this.expectedFromCaller = expectedFieldCount != ANY_FIELD_COUNT;
    closeWhenTaskCompletes();
  }

  /** Before the body is read: a block of another shape costs no allocation. */
  @Override
  void checkHeader() throws ShuffleCorruptionException {
    int declared = blocks.fieldCount();
    if (expectedFieldCount == ANY_FIELD_COUNT) {
      expectedFieldCount = declared;
    } else if (declared != expectedFieldCount) {
      throw blocks.corrupt(
          "the header declares "
              + declared
              + " fields, expected "
              + expectedFieldCount
              + (expectedFromCaller
                  ? " (the schema the reader expects)"
                  : " (as the stream's first block declares)"),
          null);
    }
  }

  @Override
  void accept(ByteBuffer body) {
    this.body = body;
  }

  @Override
  void releaseCurrent() {
    body = null;
  }

  @Override
  String kind() {
    return "iterator";
  }

  /** The current block's compressed body: direct, from position 0 to its end; reused by next(). */
  public ByteBuffer body() {
    ByteBuffer current = body;
    requireCurrent(current != null);
    return current;
  }

  public BlockCodec codec() {
    body();
    return blocks.codec();
  }

  /** The number of top-level fields the header declares. */
  public int fieldCount() {
    body();
    return blocks.fieldCount();
  }

  /** The body's length in bytes (the block's length less the field count and tag). */
  public int bodyLength() {
    body();
    return blocks.bodyLength();
  }

  /** The current block's position in the stream: 0 for the first. */
  public long blockIndex() {
    body();
    return blocks.blockIndex();
  }

  /** The stream offset of the current block's first byte. */
  public long blockOffset() {
    body();
    return blocks.blockOffset();
  }
}
