package dev.quiver.shuffle;

import dev.quiver.io.PiecewiseReads;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.util.Preconditions;

/**
 * Reads block headers and bodies from a stream of concatenated blocks, checking each header before
 * anything is allocated for the block, and keeping count of where it is for error messages. Shared
 * by the decoder and the raw-block iterator.
 */
final class BlockStream {

  private final InputStream in;
  private final long maxBlockLength;
  private final String source;

  private final ByteBuffer lengthField =
      ByteBuffer.allocate(ShuffleBlockFormat.LENGTH_FIELD_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final ByteBuffer header =
      ByteBuffer.allocate(ShuffleBlockFormat.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private final byte[] tag = new byte[ShuffleBlockFormat.TAG_BYTES];

  /** Bytes consumed from {@link #in}. */
  private long offset;

  private long blockIndex = -1;
  private long blockOffset = -1;
  private int fieldCount;
  private BlockCodec codec;
  private int bodyLength;

  /**
   * @param source what the stream is, for error messages (e.g. "shuffle 3 map 38 reduce 5"); may be
   *     null
   */
  BlockStream(InputStream in, long maxBlockLength, String source) {
    this.in = Preconditions.checkNotNull(in, "in");
    this.maxBlockLength = ShuffleBlockFormat.checkMaxBlockLength(maxBlockLength);
    this.source = source;
  }

  InputStream in() {
    return in;
  }

  /**
   * Reads and checks the next block's length, field count and codec tag.
   *
   * @return false if the stream ends exactly here, at a block boundary
   * @throws EOFException if it ends inside the header
   * @throws ShuffleCorruptionException if the header cannot be a valid block's
   */
  boolean nextHeader() throws IOException {
    long start = offset;
    lengthField.clear();
    int got = read(lengthField);
    if (got == 0) {
      return false;
    }
    blockIndex++;
    blockOffset = start;
    codec = null;
    if (got < ShuffleBlockFormat.LENGTH_FIELD_BYTES) {
      throw truncated("the block length", start, ShuffleBlockFormat.LENGTH_FIELD_BYTES, got);
    }
    long length = lengthField.getLong(0);
    checkLength(length);

    long headerAt = offset;
    header.clear();
    got = read(header);
    if (got < ShuffleBlockFormat.HEADER_BYTES) {
      throw truncated(
          "the field count and codec tag", headerAt, ShuffleBlockFormat.HEADER_BYTES, got);
    }
    long fields = header.getLong(0);
    if (fields < 0 || fields > Integer.MAX_VALUE) {
      throw corrupt(
          "field count " + Long.toUnsignedString(fields) + " is not a possible number of fields",
          null);
    }
    header.position(ShuffleBlockFormat.FIELD_COUNT_BYTES);
    header.get(tag);
    BlockCodec found = BlockCodec.lookup(tag);
    if (found == null) {
      throw corrupt(BlockCodec.unsupportedTagMessage(tag), null);
    }
    fieldCount = (int) fields;
    codec = found;
    bodyLength = (int) (length - ShuffleBlockFormat.HEADER_BYTES);
    return true;
  }

  /**
   * Reads the current block's body into {@code buffer}.
   *
   * @return the body, from position 0 to its end
   * @throws EOFException if the stream ends inside it
   */
  ByteBuffer readBody(BodyBuffer buffer) throws IOException {
    long at = offset;
    ByteBuffer body = buffer.fill(in, bodyLength);
    offset += body.remaining();
    if (body.remaining() < bodyLength) {
      throw truncated("the " + codec + " body", at, bodyLength, body.remaining());
    }
    return body;
  }

  private void checkLength(long length) throws ShuffleCorruptionException {
    String problem = null;
    if (length < 0) {
      problem = String.format("length field 0x%016X is negative as a signed 64-bit number", length);
    } else if (length < ShuffleBlockFormat.HEADER_BYTES) {
      problem =
          "length "
              + length
              + " is shorter than the "
              + ShuffleBlockFormat.HEADER_BYTES
              + "-byte field count and codec tag it must contain";
    } else if (length > maxBlockLength) {
      problem = "length " + length + " exceeds the maximum block length " + maxBlockLength;
    }
    if (problem != null) {
      throw corrupt(problem, null);
    }
  }

  private int read(ByteBuffer dst) throws IOException {
    int n = PiecewiseReads.readFully(in, dst);
    offset += n;
    return n;
  }

  long blockIndex() {
    return blockIndex;
  }

  long blockOffset() {
    return blockOffset;
  }

  int fieldCount() {
    return fieldCount;
  }

  BlockCodec codec() {
    return codec;
  }

  int bodyLength() {
    return bodyLength;
  }

  /** Bytes consumed from the stream so far. */
  long offset() {
    return offset;
  }

  /** The stream, for messages: "shuffle stream (source)". */
  String describeStream() {
    return "shuffle stream" + sourceSuffix();
  }

  /** The current block, for messages: "shuffle block 3 at stream offset 1234 (source)". */
  String where() {
    return "shuffle block " + blockIndex + " at stream offset " + blockOffset + sourceSuffix();
  }

  ShuffleCorruptionException corrupt(String problem, Throwable cause) {
    String message = "Corrupt " + where() + ": " + problem;
    return cause == null
        ? new ShuffleCorruptionException(message, blockIndex, blockOffset)
        : new ShuffleCorruptionException(message, blockIndex, blockOffset, cause);
  }

  private EOFException truncated(String what, long at, int expected, int actual) {
    return new EOFException(
        String.format(
            "Shuffle stream%s ended inside block %d (which starts at stream offset %d): reading %s"
                + " at offset %d needed %d bytes, got %d",
            sourceSuffix(), blockIndex, blockOffset, what, at, expected, actual));
  }

  private String sourceSuffix() {
    return source == null ? "" : " (" + source + ")";
  }
}
