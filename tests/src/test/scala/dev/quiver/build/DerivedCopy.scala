package dev.quiver.build

/**
 * One copy of the supported versions outside pom.xml: the whole of file `path` (relative to the
 * repository), or the lines between its two generated-block markers, and what pom.xml says it
 * should hold there.
 */
final case class DerivedCopy(path: String, expected: Seq[String], wholeFile: Boolean) {

  /** The lines `text` holds where this copy goes; fails unless the markers are there once each. */
  def current(text: String): Seq[String] = {
    val lines = text.split("\n", -1).toSeq
    if (wholeFile) lines.dropRight(1)
    else {
      val (begin, end) = markers(lines)
      lines.slice(begin + 1, end)
    }
  }

  /** `text` with this copy brought up to date. */
  def updated(text: String): String = {
    val lines = text.split("\n", -1).toSeq
    if (wholeFile) (expected :+ "").mkString("\n")
    else {
      val (begin, end) = markers(lines)
      (lines.take(begin + 1) ++ expectedIn(lines(begin)) ++ lines.drop(end)).mkString("\n")
    }
  }

  /** Whether `text` holds this copy as pom.xml says. */
  def isCurrent(text: String): Boolean = updated(text) == text

  /** The expected lines, indented as the begin marker is (YAML lists need it). */
  private def expectedIn(beginLine: String): Seq[String] = {
    val indent = beginLine.takeWhile(_ == ' ')
    expected.map(line => if (line.isEmpty) line else indent + line)
  }

  private def markers(lines: Seq[String]): (Int, Int) = {
    val begins = lines.indices.filter(i => lines(i).contains(VersionList.BeginMarker))
    val ends = lines.indices.filter(i => lines(i).contains(VersionList.EndMarker))
    require(
      begins.size == 1 && ends.size == 1 && begins.head < ends.head,
      s"$path needs one '${VersionList.BeginMarker}' line and, after it, one " +
        s"'${VersionList.EndMarker}' line; found ${begins.size} and ${ends.size}"
    )
    (begins.head, ends.head)
  }
}
