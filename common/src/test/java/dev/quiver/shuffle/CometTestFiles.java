package dev.quiver.shuffle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The shuffle files Comet 1.2.0 wrote ({@code shared/testdata/comet-1.2.0}), found beside the
 * repository: {@code shared/} is a sibling of the repository root, wherever it is cloned.
 */
final class CometTestFiles {

  static final String[] MAPS = {"shuffle_3_38_0", "shuffle_3_39_0"};
  static final int PARTITIONS = 16;

  private CometTestFiles() {}

  /** The test data folder, or null if it is not there. */
  static Path root() {
    Path repo = repoRoot();
    if (repo == null || repo.getParent() == null) {
      return null;
    }
    Path root = repo.getParent().resolve("shared/testdata/comet-1.2.0");
    return Files.isDirectory(root) ? root : null;
  }

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
    if (index.partitions() != PARTITIONS) {
      throw new IOException(map + ".index has " + index.partitions() + " partitions");
    }
    return new MapOutput(map, data, index.offsets());
  }

  /**
   * Walks up from the working directory to the directory holding {@code .git} or the parent pom.
   */
  private static Path repoRoot() {
    Path dir = Paths.get("").toAbsolutePath();
    while (dir != null) {
      if (Files.exists(dir.resolve(".git")) || isParentPom(dir.resolve("pom.xml"))) {
        return dir;
      }
      dir = dir.getParent();
    }
    return null;
  }

  /** Whether {@code pom} is quiver-parent itself, not a module naming it as its parent. */
  private static boolean isParentPom(Path pom) {
    if (!Files.isRegularFile(pom)) {
      return false;
    }
    try {
      String text = new String(Files.readAllBytes(pom), StandardCharsets.UTF_8);
      String own = text.replaceAll("(?s)<parent>.*?</parent>", "");
      return own.contains("<artifactId>quiver-parent</artifactId>");
    } catch (IOException e) {
      return false;
    }
  }
}
