package dev.quiver.shuffle;

import dev.quiver.testing.CometFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One map output of the Comet 1.2.0 shuffle files ({@link CometFiles}): its data file with Spark's
 * index file read.
 */
final class CometTestFiles {

  private CometTestFiles() {}

  /** One map output: its data file and the start offsets of its partitions (plus the end). */
  static final class MapOutput {
    final String name;
    final byte[] data;
    final long[] offsets;

    MapOutput(String name, byte[] data, long[] offsets) {
      this.name = name;
      this.data = data;
      this.offsets = offsets;
    }

    /** The bytes of one reduce partition: a stream of zero or more blocks. */
    byte[] partition(int p) {
      byte[] bytes = new byte[(int) (offsets[p + 1] - offsets[p])];
      System.arraycopy(data, (int) offsets[p], bytes, 0, bytes.length);
      return bytes;
    }
  }

  static MapOutput read(Path codecDir, String map) throws IOException {
    byte[] data = Files.readAllBytes(codecDir.resolve(map + ".data"));
    ShuffleIndex index = ShuffleIndex.read(codecDir.resolve(map + ".index"), data.length);
    if (index.partitions() != CometFiles.PARTITIONS) {
      throw new IOException(map + ".index has " + index.partitions() + " partitions");
    }
    return new MapOutput(map, data, index.offsets());
  }
}
