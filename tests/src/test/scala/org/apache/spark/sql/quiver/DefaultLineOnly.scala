package org.apache.spark.sql.quiver

import dev.quiver.build.{RepoRoot, SupportedVersions}
import org.apache.spark.SPARK_VERSION

/** For suites that run on the default Spark line's build alone (their CI time); the others compile them. */
object DefaultLineOnly {

  /** Why `what` does not run on this build, if it does not. */
  def skipReason(what: String): Option[String] = {
    val defaultLine =
      JavaLists.toSeq(SupportedVersions.read(RepoRoot.find())).find(_.isDefault).map(_.line)
    if (defaultLine.contains(SPARK_VERSION.split('.').take(2).mkString("."))) None
    else Some(s"$what: only on Spark ${defaultLine.getOrElse("?")}'s build, not $SPARK_VERSION's")
  }
}
