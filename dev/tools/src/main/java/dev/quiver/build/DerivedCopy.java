package dev.quiver.build;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One copy of the supported versions outside pom.xml: the whole of file {@code path} (relative to
 * the repository), or the lines between its two generated-block markers, and what pom.xml says it
 * should hold there.
 */
public final class DerivedCopy {

  private final String path;
  private final List<String> expected;
  private final boolean wholeFile;

  DerivedCopy(String path, List<String> expected, boolean wholeFile) {
    this.path = path;
    this.expected = List.copyOf(expected);
    this.wholeFile = wholeFile;
  }

  public String path() {
    return path;
  }

  public List<String> expected() {
    return expected;
  }

  public boolean wholeFile() {
    return wholeFile;
  }

  /**
   * The lines {@code text} holds where this copy goes; fails unless the markers are there once
   * each.
   */
  public List<String> current(String text) {
    List<String> lines = lines(text);
    if (wholeFile) {
      return lines.subList(0, lines.size() - 1);
    }
    int[] markers = markers(lines);
    return lines.subList(markers[0] + 1, markers[1]);
  }

  /** {@code text} with this copy brought up to date. */
  public String updated(String text) {
    if (wholeFile) {
      return String.join("\n", expected) + "\n";
    }
    List<String> lines = lines(text);
    int[] markers = markers(lines);
    List<String> result = new ArrayList<>(lines.subList(0, markers[0] + 1));
    result.addAll(expectedIn(lines.get(markers[0])));
    result.addAll(lines.subList(markers[1], lines.size()));
    return String.join("\n", result);
  }

  /** Whether {@code text} holds this copy as pom.xml says. */
  public boolean isCurrent(String text) {
    return updated(text).equals(text);
  }

  /** Every line of {@code text}, the empty one after a final newline included. */
  private static List<String> lines(String text) {
    return Arrays.asList(text.split("\n", -1));
  }

  /** The expected lines, indented as the begin marker is (YAML lists need it). */
  private List<String> expectedIn(String beginLine) {
    int width = 0;
    while (width < beginLine.length() && beginLine.charAt(width) == ' ') {
      width++;
    }
    String indent = beginLine.substring(0, width);
    List<String> indented = new ArrayList<>();
    for (String line : expected) {
      indented.add(line.isEmpty() ? line : indent + line);
    }
    return indented;
  }

  /** The indices of the begin and the end marker line. */
  private int[] markers(List<String> lines) {
    List<Integer> begins = new ArrayList<>();
    List<Integer> ends = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(VersionList.BEGIN_MARKER)) {
        begins.add(i);
      }
      if (lines.get(i).contains(VersionList.END_MARKER)) {
        ends.add(i);
      }
    }
    if (begins.size() != 1 || ends.size() != 1 || begins.get(0) >= ends.get(0)) {
      throw new IllegalArgumentException(
          path
              + " needs one '"
              + VersionList.BEGIN_MARKER
              + "' line and, after it, one '"
              + VersionList.END_MARKER
              + "' line; found "
              + begins.size()
              + " and "
              + ends.size());
    }
    return new int[] {begins.get(0), ends.get(0)};
  }

  @Override
  public String toString() {
    return path;
  }
}
