package dev.quiver.shuffle;

import dev.quiver.annotation.Internal;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.arrow.util.Preconditions;

/**
 * Spark's shuffle index file ({@code shuffle_<shuffle>_<map>_0.index}), the one parser of it in
 * Quiver: big-endian 64-bit offsets into the map output's data file, each partition's start, then
 * the data file's end. A valid index starts at 0, never decreases and ends at the data file's size;
 * anything else is refused with an {@link IOException} naming the file, the offset and what was
 * expected.
 */
@Internal
public final class ShuffleIndex {

  /** The size of one offset. */
  public static final int OFFSET_BYTES = 8;

  /** The largest index read whole: one Java array of bytes. */
  private static final long MAX_INDEX_BYTES = Integer.MAX_VALUE - 8;

  private final long[] offsets;

  private ShuffleIndex(long[] offsets) {
    this.offsets = offsets;
  }

  /**
   * Reads and checks a whole index file.
   *
   * @param dataFileSize the size of the data file the index describes
   * @throws IOException if the file is not a valid index of a data file of that size
   */
  public static ShuffleIndex read(Path index, long dataFileSize) throws IOException {
    long indexSize = Files.size(index);
    if (indexSize % OFFSET_BYTES != 0 || indexSize < 2 * OFFSET_BYTES) {
      throw new IOException(
          String.format(
              "%s is not a Spark shuffle index: %d bytes is not two or more %d-byte offsets",
              index, indexSize, OFFSET_BYTES));
    }
    if (indexSize > MAX_INDEX_BYTES) {
      throw new IOException(
          String.format(
              "%s is not a Spark shuffle index: %d bytes is more than %d offsets",
              index, indexSize, MAX_INDEX_BYTES / OFFSET_BYTES));
    }
    byte[] bytes = Files.readAllBytes(index);
    if (bytes.length != indexSize) {
      throw new IOException(
          index + " changed while it was read: " + indexSize + " bytes, then " + bytes.length);
    }
    long[] offsets = new long[bytes.length / OFFSET_BYTES];
    ByteBuffer.wrap(bytes).asLongBuffer().get(offsets);
    for (int i = 0; i < offsets.length; i++) {
      long least = i == 0 ? 0 : offsets[i - 1];
      if (offsets[i] < least || (i == 0 && offsets[0] != 0)) {
        throw new IOException(
            String.format(
                "%s is not a valid Spark shuffle index: offset %d (at index byte %d) is %d, "
                    + "expected at least %d%s",
                index,
                i,
                (long) i * OFFSET_BYTES,
                offsets[i],
                least,
                i == 0 ? " (and exactly 0)" : ""));
      }
    }
    long end = offsets[offsets.length - 1];
    if (end != dataFileSize) {
      throw new IOException(
          String.format(
              "%s says the data ends at file offset %d, but the data file has %d bytes (%s)",
              index, end, dataFileSize, end > dataFileSize ? "truncated" : "trailing bytes"));
    }
    return new ShuffleIndex(offsets);
  }

  /**
   * The length of one partition's segment, reading only its two offsets: for a reader of one
   * partition of a map output with many, where reading the whole index for each would cost in the
   * square of the partition count. Checks what those two offsets allow: the index's length for
   * {@code partitions}, the segment's bounds in order, its end within the data file.
   *
   * @param partitions the number of partitions the map output was written for
   * @param dataFileSize the size of the data file the index describes
   * @throws IOException if the index or the segment's bounds cannot be valid
   */
  public static long segmentLength(Path index, int partitions, int partition, long dataFileSize)
      throws IOException {
    Preconditions.checkArgument(
        partitions > 0, "partitions must be at least 1, got %s", partitions);
    Preconditions.checkElementIndex(partition, partitions, "partition");
    long expectedSize = (partitions + 1L) * OFFSET_BYTES;
    ByteBuffer bounds = ByteBuffer.allocate(2 * OFFSET_BYTES);
    long at = (long) partition * OFFSET_BYTES;
    try (FileChannel channel = FileChannel.open(index, StandardOpenOption.READ)) {
      long indexSize = channel.size();
      if (indexSize != expectedSize) {
        throw new IOException(
            String.format(
                "%s is not the Spark shuffle index of %d partitions: %d bytes, expected %d",
                index, partitions, indexSize, expectedSize));
      }
      while (bounds.hasRemaining()) {
        if (channel.read(bounds, at + bounds.position()) < 0) {
          throw new EOFException(
              index + " changed while it was read: it ends at byte " + (at + bounds.position()));
        }
      }
    }
    long start = bounds.getLong(0);
    long end = bounds.getLong(OFFSET_BYTES);
    if (start < 0 || end < start || (partition == 0 && start != 0)) {
      throw new IOException(
          String.format(
              "%s is not a valid Spark shuffle index: partition %d spans file offsets %d to %d"
                  + " (at index byte %d)",
              index, partition, start, end, at));
    }
    if (end > dataFileSize) {
      throw new IOException(
          String.format(
              "%s says partition %d ends at file offset %d, but the data file has %d bytes"
                  + " (truncated)",
              index, partition, end, dataFileSize));
    }
    return end - start;
  }

  /** The number of partitions. */
  public int partitions() {
    return offsets.length - 1;
  }

  /** The data file offset where {@code partition}'s segment starts. */
  public long start(int partition) {
    return offsets[Preconditions.checkElementIndex(partition, partitions(), "partition")];
  }

  /** The data file offset where {@code partition}'s segment ends (the next one's start). */
  public long end(int partition) {
    return offsets[Preconditions.checkElementIndex(partition, partitions(), "partition") + 1];
  }

  /** The length of {@code partition}'s segment; 0 for a partition the map wrote nothing for. */
  public long length(int partition) {
    return end(partition) - start(partition);
  }

  /** The offsets as the file holds them: every partition's start, then the data file's end. */
  public long[] offsets() {
    return offsets.clone();
  }
}
