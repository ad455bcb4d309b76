package dev.quiver.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Comet files are all there, unaltered, and found whether loose or inside a jar. */
class CometFilesTest {

  /** Files of the folder that are about the data, not data: not in the checksum list. */
  private static final Set<String> NOT_CHECKSUMMED =
      Set.of(CometFiles.CHECKSUMS, "README.md", ".gitattributes");

  @Test
  void everyFileMatchesItsChecksumAndNoneIsUnlisted() throws IOException {
    SortedMap<String, String> listed = checksums(CometFiles.root().resolve(CometFiles.CHECKSUMS));
    assertEquals(14, listed.size(), "the broadcast, the rows, 3 codecs x 2 maps x data and index");
    for (String name : listed.keySet()) {
      assertEquals(listed.get(name), sha256(CometFiles.file(name)), name + " was altered");
    }
    Set<String> present = new TreeSet<>();
    try (Stream<Path> files = Files.walk(CometFiles.root())) {
      files
          .filter(Files::isRegularFile)
          .map(f -> CometFiles.root().relativize(f).toString().replace('\\', '/'))
          .filter(name -> !NOT_CHECKSUMMED.contains(name))
          .forEach(present::add);
    }
    assertEquals(listed.keySet(), present, "files without a checksum line");
  }

  @Test
  void namedAccessorsPointAtTheListedFiles() {
    assertEquals(CometFiles.file("broadcast-0.bin"), CometFiles.broadcast());
    assertEquals(CometFiles.file("dim-rows.json.gz"), CometFiles.dimRows());
    for (String codec : List.of("lz4", "snappy", "zstd")) {
      for (String map : CometFiles.MAPS) {
        assertEquals(
            CometFiles.shuffleFolder(codec).resolve(map + ".data"),
            CometFiles.shuffleData(codec, map));
        assertTrue(Files.isRegularFile(CometFiles.shuffleIndex(codec, map)));
      }
    }
  }

  @Test
  void aMissingFileFailsNamingIt() {
    AssertionError e =
        assertThrows(AssertionError.class, () -> CometFiles.file("shuffle/lz4/shuffle_9_9_0.data"));
    assertTrue(
        e.getMessage().contains("shuffle/lz4/shuffle_9_9_0.data is missing"), e.getMessage());
    AssertionError codec =
        assertThrows(AssertionError.class, () -> CometFiles.shuffleData("gzip", "shuffle_3_38_0"));
    assertTrue(codec.getMessage().contains("shuffle/gzip/"), codec.getMessage());
  }

  @Test
  void aMissingFolderFails() {
    AssertionError e = assertThrows(AssertionError.class, () -> CometFiles.locate(null));
    assertTrue(e.getMessage().contains("not on the test class path"), e.getMessage());
  }

  /** As the Scala suites see the files after {@code package}: inside common's test jar. */
  @Test
  void filesInsideAJarAreCopiedOutToRealFiles(@TempDir Path dir) throws IOException {
    byte[] data = "not really shuffle data".getBytes(StandardCharsets.UTF_8);
    Path jar = dir.resolve("quiver-common-tests.jar");
    try (OutputStream file = Files.newOutputStream(jar);
        ZipOutputStream zip = new ZipOutputStream(file)) {
      zip.putNextEntry(new ZipEntry(CometFiles.FOLDER + "/"));
      zip.putNextEntry(new ZipEntry(CometFiles.FOLDER + "/" + CometFiles.CHECKSUMS));
      zip.write("checksums".getBytes(StandardCharsets.UTF_8));
      zip.putNextEntry(new ZipEntry(CometFiles.FOLDER + "/shuffle/lz4/"));
      zip.putNextEntry(new ZipEntry(CometFiles.FOLDER + "/shuffle/lz4/m.data"));
      zip.write(data);
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      URL checksums = loader.getResource(CometFiles.FOLDER + "/" + CometFiles.CHECKSUMS);
      assertEquals("jar", checksums.getProtocol());
      Path extracted = CometFiles.locate(checksums);
      assertEquals("file", extracted.toUri().getScheme());
      assertNotEquals(CometFiles.root(), extracted);
      assertArrayEquals(data, Files.readAllBytes(extracted.resolve("shuffle/lz4/m.data")));
      assertEquals(
          List.of("checksums"), Files.readAllLines(extracted.resolve(CometFiles.CHECKSUMS)));
    }
  }

  /** {@code sha256sum}'s lines: file name to hex digest. */
  private static SortedMap<String, String> checksums(Path file) throws IOException {
    TreeMap<String, String> sums = new TreeMap<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      String[] parts = line.split(" [ *]", 2);
      assertEquals(2, parts.length, () -> "not a sha256sum line: " + line);
      sums.put(parts[1], parts[0]);
    }
    return sums;
  }

  private static String sha256(Path file) throws IOException {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(String.format("%02x", b & 0xFF));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
