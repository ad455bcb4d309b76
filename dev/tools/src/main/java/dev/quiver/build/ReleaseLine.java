package dev.quiver.build;

import java.util.List;

/**
 * A supported Spark release line ({@code 3.5}): its profile {@code spark-<line>} and the builds
 * made of it, the profile alone first and then with each {@code scala-*} profile that changes its
 * Scala version.
 */
public final class ReleaseLine {

  private final String line;
  private final boolean isDefault;
  private final List<Build> builds;

  ReleaseLine(String line, boolean isDefault, List<Build> builds) {
    this.line = line;
    this.isDefault = isDefault;
    this.builds = List.copyOf(builds);
  }

  /** The line, {@code major.minor}. */
  public String line() {
    return line;
  }

  /** Whether its profile is the one active by default. */
  public boolean isDefault() {
    return isDefault;
  }

  public List<Build> builds() {
    return builds;
  }

  public String profile() {
    return "spark-" + line;
  }

  /** The profile alone, without a {@code scala-*} profile. */
  public Build base() {
    return builds.get(0);
  }

  /** The module holding this line's shim and building its artifacts. */
  public String shimModule() {
    return base().get("shim.module");
  }

  @Override
  public String toString() {
    return profile() + (isDefault ? " (default)" : "");
  }
}
