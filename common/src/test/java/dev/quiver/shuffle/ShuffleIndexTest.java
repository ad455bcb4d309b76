package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Spark's shuffle index: what a valid one gives, and each way an invalid one is refused. */
class ShuffleIndexTest {

  @TempDir Path dir;

  /** An index file holding {@code offsets} as Spark writes them: big-endian longs. */
  private Path index(long... offsets) throws IOException {
    ByteBuffer bytes = ByteBuffer.allocate(offsets.length * ShuffleIndex.OFFSET_BYTES);
    for (long offset : offsets) {
      bytes.putLong(offset);
    }
    return indexBytes(bytes.array());
  }

  private Path indexBytes(byte[] bytes) throws IOException {
    Path file = dir.resolve("shuffle_3_38_0.index");
    Files.write(file, bytes);
    return file;
  }

  private static void assertRefused(String expected, Executable read) {
    IOException e = assertThrows(IOException.class, read);
    assertTrue(e.getMessage().contains(expected), e.getMessage());
    assertTrue(e.getMessage().contains("shuffle_3_38_0.index"), "names the file: " + e);
  }

  /**
   * Reading the index of {@code offsets} for a data file of {@code dataLength} bytes refuses it.
   */
  private void assertReadRefused(String expected, long dataLength, long... offsets)
      throws IOException {
    Path file = index(offsets);
    assertRefused(expected, () -> ShuffleIndex.read(file, dataLength));
  }

  @Test
  void aValidIndexGivesEachPartitionsSegment() throws IOException {
    Path file = index(0, 100, 100, 250);
    ShuffleIndex index = ShuffleIndex.read(file, 250);
    assertEquals(3, index.partitions());
    assertEquals(100, index.start(1));
    assertEquals(100, index.end(1));
    assertEquals(0, index.length(1), "a partition the map wrote nothing for");
    assertEquals(150, index.length(2));
    assertArrayEquals(new long[] {0, 100, 100, 250}, index.offsets());
    assertThrows(IndexOutOfBoundsException.class, () -> index.start(3));
    assertThrows(IndexOutOfBoundsException.class, () -> index.end(-1));

    for (int p = 0; p < 3; p++) {
      assertEquals(index.length(p), ShuffleIndex.segmentLength(file, 3, p, 250), "partition " + p);
    }
  }

  @Test
  void aLengthThatIsNotTwoOrMoreOffsetsIsRefused() throws IOException {
    for (int size : new int[] {0, 8, 12, 17}) {
      Path file = indexBytes(new byte[size]);
      assertRefused(
          "is not a Spark shuffle index: " + size + " bytes is not two or more 8-byte offsets",
          () -> ShuffleIndex.read(file, 0));
    }
  }

  @Test
  void offsetsThatDecreaseOrDoNotStartAtZeroAreRefused() throws IOException {
    assertReadRefused(
        "offset 2 (at index byte 16) is 100, expected at least 500", 600, 0, 500, 100, 600);
    assertReadRefused(
        "offset 0 (at index byte 0) is 8, expected at least 0 (and exactly 0)", 100, 8, 100);
    assertReadRefused("offset 1 (at index byte 8) is -1, expected at least 0", 100, 0, -1, 100);
  }

  @Test
  void anEndOtherThanTheDataFilesSizeIsRefused() throws IOException {
    Path file = index(0, 100, 250);
    assertRefused(
        "says the data ends at file offset 250, but the data file has 200 bytes (truncated)",
        () -> ShuffleIndex.read(file, 200));
    assertRefused(
        "says the data ends at file offset 250, but the data file has 300 bytes (trailing bytes)",
        () -> ShuffleIndex.read(file, 300));
  }

  @Test
  void oneSegmentIsCheckedAsFarAsItsTwoOffsetsAllow() throws IOException {
    Path file = index(0, 100, 50, 250);
    assertRefused(
        "is not the Spark shuffle index of 4 partitions: 32 bytes, expected 40",
        () -> ShuffleIndex.segmentLength(file, 4, 0, 250));
    assertRefused(
        "partition 1 spans file offsets 100 to 50 (at index byte 8)",
        () -> ShuffleIndex.segmentLength(file, 3, 1, 250));
    assertRefused(
        "says partition 2 ends at file offset 250, but the data file has 249 bytes (truncated)",
        () -> ShuffleIndex.segmentLength(file, 3, 2, 249));
    Path late = index(8, 100);
    assertRefused(
        "partition 0 spans file offsets 8 to 100",
        () -> ShuffleIndex.segmentLength(late, 1, 0, 100));
    Path negative = index(0, -8, 100);
    assertRefused(
        "partition 1 spans file offsets -8 to 100",
        () -> ShuffleIndex.segmentLength(negative, 2, 1, 100));
    assertThrows(
        IndexOutOfBoundsException.class, () -> ShuffleIndex.segmentLength(file, 3, 3, 250));
    assertThrows(IllegalArgumentException.class, () -> ShuffleIndex.segmentLength(file, 0, 0, 250));
  }
}
