package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.shuffle.BlockCodec;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The tools stay out of the artifacts: no {@code dev.quiver.tools} class in common's build output,
 * and no module whose jar is published or shaded into one (every top-level module but {@code
 * tests}) holds tool sources or depends on this module. The per-release jars shade only common and
 * spark-shims, so this covers them too.
 */
class ToolsOutsideArtifactsTest {

  private static final String TOOLS_PATH = "dev/quiver/tools/";

  /** The repository root; surefire sets it (dev/tools/pom.xml), else the module's grandparent. */
  private static final Path REPO =
      Paths.get(System.getProperty("quiver.repo.root", "../..")).toAbsolutePath().normalize();

  @Test
  void toolClassesComeFromThisModuleAndNoneFromCommon() throws IOException {
    Path tools = codeSource(QuiverDump.class);
    Path common = codeSource(BlockCodec.class);
    assertNotEquals(common, tools, "the tool was loaded from common's output");
    assertEquals(Collections.emptyList(), toolEntries(common), "tool classes in " + common);
  }

  @Test
  void noArtifactModuleHoldsToolSources() throws IOException {
    for (Path module : artifactModules()) {
      Path main = module.resolve("src/main");
      if (!Files.isDirectory(main)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(main)) {
        List<Path> offending =
            files
                .filter(p -> isToolPackageDirectory(p) || declaresToolPackage(p))
                .collect(Collectors.toList());
        assertEquals(Collections.emptyList(), offending, "tool sources in " + module);
      }
    }
  }

  @Test
  void noArtifactModuleDependsOnTheTools() throws IOException {
    for (Path module : artifactModules()) {
      String pom =
          new String(Files.readAllBytes(module.resolve("pom.xml")), StandardCharsets.UTF_8);
      assertFalse(
          pom.contains("<artifactId>quiver-tools</artifactId>"), module + "/pom.xml names it");
    }
  }

  /** Every top-level module but the integration suites, which are not published. */
  private static List<Path> artifactModules() throws IOException {
    List<Path> modules = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(REPO)) {
      dirs.filter(d -> Files.isRegularFile(d.resolve("pom.xml")))
          .filter(d -> !d.getFileName().toString().equals("tests"))
          .sorted()
          .forEach(modules::add);
    }
    // Found by listing, so that a new release module is covered; these must be among them.
    for (String known : new String[] {"common", "spark-shims", "spark-3.5", "spark-4.1"}) {
      assertTrue(modules.contains(REPO.resolve(known)), known + " not found under " + REPO);
    }
    return modules;
  }

  private static boolean isToolPackageDirectory(Path path) {
    return Files.isDirectory(path) && path.endsWith(Paths.get("dev", "quiver", "tools"));
  }

  private static boolean declaresToolPackage(Path file) {
    String name = file.getFileName().toString();
    if (!Files.isRegularFile(file) || !(name.endsWith(".java") || name.endsWith(".scala"))) {
      return false;
    }
    try {
      String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
      return text.contains("package dev.quiver.tools");
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
  }

  /** The class folder or jar a class was loaded from. */
  private static Path codeSource(Class<?> type) {
    try {
      return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The files under {@code dev/quiver/tools/} of a class folder or jar. */
  private static List<String> toolEntries(Path classes) throws IOException {
    List<String> entries = new ArrayList<>();
    if (Files.isDirectory(classes)) {
      Path tools = classes.resolve(TOOLS_PATH);
      if (Files.exists(tools)) {
        try (Stream<Path> files = Files.walk(tools)) {
          // Files only: an incremental build may leave the folder of a removed class behind.
          files
              .filter(Files::isRegularFile)
              .map(p -> classes.relativize(p).toString())
              .forEach(entries::add);
        }
      }
      return entries;
    }
    try (ZipFile jar = new ZipFile(classes.toFile())) {
      for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
        String name = e.nextElement().getName();
        if (name.startsWith(TOOLS_PATH) && !name.endsWith("/")) {
          entries.add(name);
        }
      }
    }
    return entries;
  }
}
