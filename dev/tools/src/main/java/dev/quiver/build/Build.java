package dev.quiver.build;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One way to build a release line: the Maven profiles to activate ({@code spark-3.5} or {@code
 * spark-3.5,scala-2.13}) and the properties they give, before interpolation.
 */
public final class Build {

  private static final Pattern REFERENCE = Pattern.compile("\\$\\{([^}]+)\\}");

  private final String profiles;
  private final Map<String, String> properties;

  Build(String profiles, Map<String, String> properties) {
    this.profiles = profiles;
    this.properties = Map.copyOf(properties);
  }

  /** The profiles to activate, comma-separated as {@code -P} takes them. */
  public String profiles() {
    return profiles;
  }

  Map<String, String> properties() {
    return properties;
  }

  /**
   * The property {@code key} with every {@code ${other}} in it replaced; fails if one is not
   * defined.
   */
  public String get(String key) {
    return resolve(key, Set.of());
  }

  public String scalaBinaryVersion() {
    return get("scala.binary.version");
  }

  /** {@code template} (such as an artifactId in a module's pom) with these properties filled in. */
  public String interpolate(String template) {
    return interpolate(template, Set.of());
  }

  private String interpolate(String template, Set<String> seen) {
    Matcher reference = REFERENCE.matcher(template);
    return reference.replaceAll(m -> Matcher.quoteReplacement(resolve(m.group(1), seen)));
  }

  private String resolve(String key, Set<String> seen) {
    if (seen.contains(key)) {
      throw new IllegalArgumentException("property " + key + " refers to itself in " + profiles);
    }
    String raw = properties.get(key);
    if (raw == null) {
      throw new IllegalStateException(
          "property " + key + " is not defined for profile " + profiles);
    }
    Set<String> seenNow = new HashSet<>(seen);
    seenNow.add(key);
    return interpolate(raw, seenNow);
  }

  @Override
  public String toString() {
    return profiles;
  }
}
