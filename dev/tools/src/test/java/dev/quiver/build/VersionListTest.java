package dev.quiver.build;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * pom.xml's profiles are the one list of supported versions; every copy of it elsewhere must say
 * the same. A failure here means pom.xml changed without {@code dev/versions} being run (or a copy
 * was edited by hand): run {@code dev/versions} and commit what it rewrites.
 */
class VersionListTest {

  private final File root = RepoRoot.find();
  private final List<ReleaseLine> lines = SupportedVersions.read(root);
  private final List<DerivedCopy> copies = VersionList.copies(root);

  @Test
  void pomHasAProfilePerLineOneOfThemTheDefaultEachWithItsModule() {
    Set<String> distinct = lines.stream().map(ReleaseLine::line).collect(Collectors.toSet());
    assertTrue(distinct.size() == lines.size() && lines.size() >= 2, lines::toString);
    assertEquals(1, lines.stream().filter(ReleaseLine::isDefault).count(), lines::toString);
    List<String> artifacts = new ArrayList<>();
    for (ReleaseLine line : lines) {
      assertTrue(
          new File(root, line.shimModule() + "/pom.xml").isFile(),
          line.profile() + "'s shim module");
      for (Build build : line.builds()) {
        for (String key : VersionList.VERSION_KEYS) {
          assertFalse(build.get(key).isEmpty(), build.profiles() + " has no " + key);
        }
        artifacts.add(SupportedVersions.artifactId(root, line, build));
      }
    }
    assertEquals(
        artifacts.size(),
        new HashSet<>(artifacts).size(),
        "two builds publish the same artifact: " + artifacts);
  }

  @TestFactory
  Stream<DynamicTest> everyCopyAgreesWithThePom() {
    return copies.stream()
        .map(
            copy ->
                DynamicTest.dynamicTest(
                    copy.path() + " agrees with pom.xml's profiles",
                    () -> {
                      String text = VersionList.read(root, copy);
                      assertTrue(
                          copy.isCurrent(text),
                          () ->
                              copy.path()
                                  + " is out of date with pom.xml's profiles; run dev/versions."
                                  + " Expected:\n"
                                  + String.join("\n", copy.expected())
                                  + "\nfound:\n"
                                  + String.join("\n", copy.current(text)));
                    }));
  }

  /**
   * Maven turns tests/pom.xml's activeByDefault Spark 4.1 profile off only for a profile it has.
   */
  @Test
  void testsPomHasAProfilePerLineSoItsSpark41OnlyProfileIsOffForTheOthers() throws IOException {
    String pom =
        new String(
            Files.readAllBytes(new File(root, "tests/pom.xml").toPath()), StandardCharsets.UTF_8);
    Set<String> ids = new HashSet<>();
    Matcher id = Pattern.compile("<id>(spark-[^<]+)</id>").matcher(pom);
    while (id.find()) {
      ids.add(id.group(1));
    }
    for (ReleaseLine line : lines) {
      assertTrue(ids.contains(line.profile()), "tests/pom.xml has no " + line.profile());
    }
  }

  /** ShimSuite checks, on every profile, that the loader reads this file from the artifact. */
  @Test
  void theShimLoadersListIsAmongSparkShimsResources() {
    DerivedCopy list =
        copies.stream().filter(DerivedCopy::wholeFile).findFirst().orElseThrow(AssertionError::new);
    assertEquals("spark-shims/src/main/resources/" + VersionList.SHIM_LINES_RESOURCE, list.path());
    assertTrue(new File(root, list.path()).isFile(), list.path());
  }

  @Test
  void aVersionChangedInTheReadmesTableIsCaughtAndDevVersionsRestoresIt() {
    DerivedCopy readme =
        copies.stream()
            .filter(c -> c.path().equals("README.md"))
            .findFirst()
            .orElseThrow(AssertionError::new);
    String text = readme.updated(VersionList.read(root, readme));
    String arrow = "| " + lines.get(0).base().get("arrow.version") + " |";
    assertTrue(text.contains(arrow), arrow);
    String edited = text.replaceFirst(Pattern.quote(arrow), "| 0.0.0 |");
    assertFalse(readme.isCurrent(edited));
    assertEquals(text, readme.updated(edited));
  }
}
