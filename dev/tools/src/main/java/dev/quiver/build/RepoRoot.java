package dev.quiver.build;

import java.io.File;

/** The repository's root folder, where the checks find pom.xml and the files derived from it. */
public final class RepoRoot {

  private RepoRoot() {}

  /**
   * The folder the build passes as {@code quiver.repo.root} (the test plugins of dev/tools and
   * tests set it); a run from the root needs none.
   */
  public static File find() {
    File root = new File(System.getProperty("quiver.repo.root", ".")).getAbsoluteFile();
    if (!new File(root, "pom.xml").isFile() || !new File(root, "spark-shims").isDirectory()) {
      throw new IllegalArgumentException(
          root
              + " is not Quiver's repository root (no pom.xml and spark-shims/ there); "
              + "set -Dquiver.repo.root");
    }
    return root;
  }
}
