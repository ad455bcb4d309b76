package dev.quiver.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemNotFoundException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

/**
 * The files Apache DataFusion Comet 1.2.0 wrote on Spark 4.1.3, which common's test resources hold
 * ({@code common/src/test/resources/comet-1.2.0}, described by its {@code README.md}): the one
 * place tests find them.
 *
 * <p>They are part of the repository, so a file that is not there is a broken checkout or build: it
 * fails the calling test with an {@link AssertionError} (plain, so that ScalaTest fails too)
 * instead of skipping it.
 */
public final class CometFiles {

  /** The folder's name on the test class path. */
  public static final String FOLDER = "comet-1.2.0";

  /** The two map outputs each codec's shuffle folder holds. */
  public static final List<String> MAPS = List.of("shuffle_3_38_0", "shuffle_3_39_0");

  /** The reduce partitions of every map output. */
  public static final int PARTITIONS = 16;

  /** The rows of {@code dim}: the broadcast value's, and the two maps' together. */
  public static final int DIM_ROWS = 20_000;

  /** The checksums of every file, one {@code sha256sum} line each; always present. */
  static final String CHECKSUMS = "SHA256SUMS";

  /** Found on first use. */
  private static Path root;

  private CometFiles() {}

  /**
   * The folder on disk: common's test classes folder when they are loose classes (Maven's reactor
   * before {@code package}), or a copy extracted once per JVM when they come from common's test
   * jar, so that every caller (Spark's file readers too) gets real paths.
   */
  public static synchronized Path root() {
    if (root == null) {
      root = locate(CometFiles.class.getResource("/" + FOLDER + "/" + CHECKSUMS));
    }
    return root;
  }

  /** {@code relative} (e.g. {@code shuffle/lz4/shuffle_3_38_0.data}) under {@link #root()}. */
  public static Path file(String relative) {
    Path file = root().resolve(relative);
    if (!Files.isRegularFile(file)) {
      throw new AssertionError(
          "Comet test file "
              + relative
              + " is missing: expected "
              + file
              + " (from common/src/test/resources/"
              + FOLDER
              + ")");
    }
    return file;
  }

  /** The broadcast value Comet shipped for the join. */
  public static Path broadcast() {
    return file("broadcast-0.bin");
  }

  /** Every row of {@code dim} as Spark's JSON writer wrote it, gzipped. */
  public static Path dimRows() {
    return file("dim-rows.json.gz");
  }

  /** The folder of the shuffle output written with {@code codec} (lz4, snappy or zstd). */
  public static Path shuffleFolder(String codec) {
    return file("shuffle/" + codec + "/" + MAPS.get(0) + ".data").getParent();
  }

  /** The data file of map output {@code map} written with {@code codec}. */
  public static Path shuffleData(String codec, String map) {
    return file("shuffle/" + codec + "/" + map + ".data");
  }

  /** The index file of map output {@code map} written with {@code codec}. */
  public static Path shuffleIndex(String codec, String map) {
    return file("shuffle/" + codec + "/" + map + ".index");
  }

  /** The folder holding {@code checksums} (the resource URL of its checksum file, or null). */
  static Path locate(URL checksums) {
    if (checksums == null) {
      throw new AssertionError(
          FOLDER
              + "/"
              + CHECKSUMS
              + " is not on the test class path: common/src/test/resources/"
              + FOLDER
              + " is missing, or common's test classes (or test jar) are not on it");
    }
    try {
      URI uri = checksums.toURI();
      if ("file".equals(uri.getScheme())) {
        return Paths.get(uri).getParent();
      }
      if ("jar".equals(uri.getScheme())) {
        return extract(uri);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot copy the Comet test files out of " + checksums, e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    throw new AssertionError("the Comet test files are at " + checksums + ", not in a file or jar");
  }

  /** Copies the folder holding {@code checksums} out of its jar into a temporary folder. */
  private static Path extract(URI checksums) throws IOException {
    FileSystem jar;
    boolean opened = false;
    try {
      jar = FileSystems.getFileSystem(checksums);
    } catch (FileSystemNotFoundException e) {
      jar = FileSystems.newFileSystem(checksums, Collections.emptyMap());
      opened = true;
    }
    try {
      Path source = Paths.get(checksums).getParent();
      Path target = Files.createTempDirectory("quiver-" + FOLDER + "-");
      target.toFile().deleteOnExit();
      try (Stream<Path> paths = Files.walk(source)) {
        for (Path from : (Iterable<Path>) paths::iterator) {
          Path to = target.resolve(source.relativize(from).toString());
          if (Files.isDirectory(from)) {
            Files.createDirectories(to);
          } else {
            Files.copy(from, to);
          }
          // Deleted at exit in the reverse order of these calls: files before their folders.
          to.toFile().deleteOnExit();
        }
      }
      return target;
    } finally {
      if (opened) {
        jar.close();
      }
    }
  }
}
