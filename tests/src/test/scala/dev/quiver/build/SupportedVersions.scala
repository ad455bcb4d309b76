package dev.quiver.build

import java.io.File
import javax.xml.parsers.DocumentBuilderFactory

import org.w3c.dom.Element

/**
 * One way to build a release line: the Maven profiles to activate (`spark-3.5` or
 * `spark-3.5,scala-2.13`) and the properties they give, before interpolation.
 */
final case class Build(profiles: String, properties: Map[String, String]) {

  /** The property `key` with every `${other}` in it replaced; fails if one is not defined. */
  def apply(key: String): String = resolve(key, Set.empty)

  def scalaBinaryVersion: String = apply("scala.binary.version")

  /** `template` (such as an artifactId in a module's pom) with these properties filled in. */
  def interpolate(template: String, seen: Set[String] = Set.empty): String =
    Build.Reference.replaceAllIn(
      template,
      m => java.util.regex.Matcher.quoteReplacement(resolve(m.group(1), seen))
    )

  private def resolve(key: String, seen: Set[String]): String = {
    require(!seen.contains(key), s"property $key refers to itself in $profiles")
    val raw = properties.getOrElse(
      key,
      throw new IllegalStateException(s"property $key is not defined for profile $profiles")
    )
    interpolate(raw, seen + key)
  }
}

object Build {
  private val Reference = """\$\{([^}]+)\}""".r
}

/**
 * A supported Spark release line (`3.5`): its profile `spark-<line>` and the builds made of it, the
 * profile alone first and then with each `scala-*` profile that changes its Scala version.
 */
final case class ReleaseLine(line: String, isDefault: Boolean, builds: Seq[Build]) {

  def profile: String = s"spark-$line"

  def base: Build = builds.head

  /** The module holding this line's shim and building its artifacts. */
  def shimModule: String = base("shim.module")
}

/**
 * Reads the supported versions from the parent pom.xml, their one source: Maven needs a profile per
 * Spark line with its Spark, Scala, Arrow and codec versions anyway, so every other copy (see
 * [[VersionList]]) is derived from those profiles. The profiles' properties override the pom's
 * top-level ones, which are the default line's; a `scala-*` profile, declared after them,
 * overrides both.
 */
object SupportedVersions {

  private val SparkProfile = """spark-(\d+\.\d+)""".r

  /** Every supported line of the pom at `root`, oldest first. */
  def read(root: File): Seq[ReleaseLine] = {
    val pom =
      DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new File(root, "pom.xml"))
    val project = pom.getDocumentElement
    val defaults = properties(child(project, "properties"))
    val profiles = child(project, "profiles").toSeq.flatMap(children(_, "profile"))
    val scalaProfiles = profiles
      .map(p => text(p, "id") -> properties(child(p, "properties")))
      .filter(_._1.startsWith("scala-"))
    val lines = profiles.flatMap { profile =>
      text(profile, "id") match {
        case id @ SparkProfile(line) =>
          val alone = Build(id, defaults ++ properties(child(profile, "properties")))
          val withScala = scalaProfiles.collect {
            case (scalaId, overrides)
                if Build("", alone.properties ++ overrides).scalaBinaryVersion !=
                  alone.scalaBinaryVersion =>
              Build(s"$id,$scalaId", alone.properties ++ overrides)
          }
          val activeByDefault =
            child(profile, "activation").exists(text(_, "activeByDefault") == "true")
          Some(ReleaseLine(line, activeByDefault, alone +: withScala))
        case _ => None
      }
    }
    // SparkProfile's pattern makes every line two numbers.
    lines.sortBy { l =>
      val numbers = l.line.split('.').map(_.toInt)
      (numbers(0), numbers(1))
    }
  }

  /** The artifactId `build` gets from its shim module's pom. */
  def artifactId(root: File, line: ReleaseLine, build: Build): String = {
    val module = new File(new File(root, line.shimModule), "pom.xml")
    val pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(module)
    build.interpolate(text(pom.getDocumentElement, "artifactId"))
  }

  private def children(parent: Element, tag: String): Seq[Element] = {
    val nodes = parent.getChildNodes
    (0 until nodes.getLength).map(nodes.item).collect {
      case e: Element if tag == "*" || e.getTagName == tag => e
    }
  }

  private def child(parent: Element, tag: String): Option[Element] =
    children(parent, tag).headOption

  private def text(parent: Element, tag: String): String =
    child(parent, tag).map(_.getTextContent.trim).getOrElse("")

  private def properties(section: Option[Element]): Map[String, String] =
    section.toSeq.flatMap(children(_, "*")).map(p => p.getTagName -> p.getTextContent.trim).toMap
}

/** The repository's root folder, where the suites find pom.xml and the files derived from it. */
object RepoRoot {

  /** The scalatest plugin passes it as `quiver.repo.root`; a run from the root needs none. */
  def apply(): File = {
    val root = new File(sys.props.getOrElse("quiver.repo.root", ".")).getAbsoluteFile
    require(
      new File(root, "pom.xml").isFile && new File(root, "spark-shims").isDirectory,
      s"$root is not Quiver's repository root (no pom.xml and spark-shims/ there); " +
        "set -Dquiver.repo.root"
    )
    root
  }
}
