package dev.quiver.build

import java.io.File

import org.scalatest.funsuite.AnyFunSuite

/**
 * pom.xml's profiles are the one list of supported versions; every copy of it elsewhere must say
 * the same. A failure here means pom.xml changed without `dev/versions` being run (or a copy was
 * edited by hand): run `dev/versions` and commit what it rewrites.
 */
class VersionListSuite extends AnyFunSuite {

  private val root = RepoRoot()
  private val lines = SupportedVersions.read(root)
  private val copies = VersionList.copies(root)

  test("pom.xml has a profile per supported line, one of them the default, each with its module") {
    assert(lines.map(_.line).distinct.size == lines.size && lines.size >= 2, lines)
    assert(lines.count(_.isDefault) == 1, lines.map(l => l.profile -> l.isDefault))
    for (line <- lines) {
      assert(new File(root, s"${line.shimModule}/pom.xml").isFile, s"${line.profile}'s shim module")
      for {
        build <- line.builds
        key <- VersionList.VersionKeys
      } assert(build(key).nonEmpty, s"${build.profiles} has no $key")
    }
    val artifacts = lines.flatMap(l => l.builds.map(SupportedVersions.artifactId(root, l, _)))
    assert(artifacts.distinct == artifacts, s"two builds publish the same artifact: $artifacts")
  }

  for (copy <- copies)
    test(s"${copy.path} agrees with pom.xml's profiles") {
      val text = VersionList.read(root, copy)
      assert(
        copy.isCurrent(text),
        s"${copy.path} is out of date with pom.xml's profiles; run dev/versions. Expected:\n" +
          copy.expected.mkString("\n") + "\nfound:\n" + copy.current(text).mkString("\n")
      )
    }

  test(
    "tests/pom.xml has a profile per line, so its Spark 4.1-only profile is off for the others"
  ) {
    val pom = scala.io.Source.fromFile(new File(root, "tests/pom.xml"), "UTF-8")
    val ids =
      try "<id>(spark-[^<]+)</id>".r.findAllMatchIn(pom.mkString).map(_.group(1)).toSet
      finally pom.close()
    for (line <- lines) assert(ids.contains(line.profile), s"tests/pom.xml has no ${line.profile}")
  }

  test("the shim loader's list is on the class path the artifacts give") {
    val resource = getClass.getClassLoader.getResource(VersionList.ShimLinesResource)
    assert(resource != null, s"${VersionList.ShimLinesResource} is not on the class path")
  }

  test("a version changed in the README's table is caught, and dev/versions restores it") {
    val readme = copies.find(_.path == "README.md").get
    val text = readme.updated(VersionList.read(root, readme))
    val arrow = s"| ${lines.head.base("arrow.version")} |"
    assert(text.contains(arrow))
    val edited = text.replaceFirst(java.util.regex.Pattern.quote(arrow), "| 0.0.0 |")
    assert(!readme.isCurrent(edited))
    assert(readme.updated(edited) == text)
  }
}
