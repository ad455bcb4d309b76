package dev.quiver.build;

import java.io.File;
import java.io.IOException;
import java.util.AbstractMap.SimpleEntry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Reads the supported versions from the parent pom.xml, their one source: Maven needs a profile per
 * Spark line with its Spark, Scala, Arrow and codec versions anyway, so every other copy (see
 * {@link VersionList}) is derived from those profiles. The profiles' properties override the pom's
 * top-level ones, which are the default line's; a {@code scala-*} profile, declared after them,
 * overrides both.
 */
public final class SupportedVersions {

  private static final Pattern SPARK_PROFILE = Pattern.compile("spark-(\\d+\\.\\d+)");

  private SupportedVersions() {}

  /** Every supported line of the pom at {@code root}, oldest first. */
  public static List<ReleaseLine> read(File root) {
    Element project = parse(new File(root, "pom.xml"));
    Map<String, String> defaults = properties(child(project, "properties"));
    List<Element> profiles =
        child(project, "profiles").map(p -> children(p, "profile")).orElse(List.of());
    List<Map.Entry<String, Map<String, String>>> scalaProfiles = new ArrayList<>();
    for (Element profile : profiles) {
      String id = text(profile, "id");
      if (id.startsWith("scala-")) {
        scalaProfiles.add(new SimpleEntry<>(id, properties(child(profile, "properties"))));
      }
    }
    List<ReleaseLine> lines = new ArrayList<>();
    for (Element profile : profiles) {
      String id = text(profile, "id");
      Matcher sparkProfile = SPARK_PROFILE.matcher(id);
      if (!sparkProfile.matches()) {
        continue;
      }
      Build alone = new Build(id, merged(defaults, properties(child(profile, "properties"))));
      List<Build> builds = new ArrayList<>();
      builds.add(alone);
      for (Map.Entry<String, Map<String, String>> scala : scalaProfiles) {
        Map<String, String> withScala = merged(alone.properties(), scala.getValue());
        if (!new Build("", withScala).scalaBinaryVersion().equals(alone.scalaBinaryVersion())) {
          builds.add(new Build(id + "," + scala.getKey(), withScala));
        }
      }
      boolean activeByDefault =
          child(profile, "activation")
              .map(a -> text(a, "activeByDefault").equals("true"))
              .orElse(false);
      lines.add(new ReleaseLine(sparkProfile.group(1), activeByDefault, builds));
    }
    // SPARK_PROFILE's pattern makes every line two numbers. List.sort is stable.
    lines.sort(
        Comparator.<ReleaseLine>comparingInt(l -> number(l, 0))
            .thenComparingInt(l -> number(l, 1)));
    return lines;
  }

  /** The artifactId {@code build} gets from its shim module's pom. */
  public static String artifactId(File root, ReleaseLine line, Build build) {
    File module = new File(new File(root, line.shimModule()), "pom.xml");
    return build.interpolate(text(parse(module), "artifactId"));
  }

  /** The major (index 0) or minor (index 1) number of a line, which has exactly one dot. */
  private static int number(ReleaseLine line, int index) {
    String text = line.line();
    int dot = text.indexOf('.');
    return Integer.parseInt(index == 0 ? text.substring(0, dot) : text.substring(dot + 1));
  }

  private static Map<String, String> merged(
      Map<String, String> base, Map<String, String> overrides) {
    Map<String, String> merged = new HashMap<>(base);
    merged.putAll(overrides);
    return merged;
  }

  private static Element parse(File pom) {
    try {
      return DocumentBuilderFactory.newInstance()
          .newDocumentBuilder()
          .parse(pom)
          .getDocumentElement();
    } catch (ParserConfigurationException | SAXException e) {
      throw new IllegalStateException("cannot read " + pom + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The child elements of {@code parent} named {@code tag}, or all of them for {@code "*"}. */
  private static List<Element> children(Element parent, String tag) {
    List<Element> found = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node node = nodes.item(i);
      if (node instanceof Element
          && (tag.equals("*") || ((Element) node).getTagName().equals(tag))) {
        found.add((Element) node);
      }
    }
    return found;
  }

  private static Optional<Element> child(Element parent, String tag) {
    return children(parent, tag).stream().findFirst();
  }

  private static String text(Element parent, String tag) {
    return child(parent, tag).map(e -> e.getTextContent().trim()).orElse("");
  }

  private static Map<String, String> properties(Optional<Element> section) {
    Map<String, String> properties = new HashMap<>();
    section.ifPresent(
        s ->
            children(s, "*")
                .forEach(p -> properties.put(p.getTagName(), p.getTextContent().trim())));
    return properties;
  }
}
