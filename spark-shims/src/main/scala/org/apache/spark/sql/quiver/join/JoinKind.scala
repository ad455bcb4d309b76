package org.apache.spark.sql.quiver.join

import dev.quiver.annotation.Internal
import org.apache.spark.sql.catalyst.plans.{
  Cross => SparkCross,
  Inner => SparkInner,
  JoinType,
  LeftAnti => SparkLeftAnti,
  LeftOuter => SparkLeftOuter,
  LeftSemi => SparkLeftSemi,
  RightOuter => SparkRightOuter
}

/**
 * Which rows a broadcast join returns. Every kind streams the probe side and never has to find the
 * build rows that matched nothing, which is what lets each task work alone.
 *
 * @param sparkName the join type Spark is asked to analyze the join as
 */
@Internal
sealed abstract class JoinKind(val sparkName: String) extends Serializable {

  /** True when the build side is the left input, so output rows are build columns first. */
  def buildOnLeft: Boolean = false

  /** True when a probe row without a match is returned once, its build columns null. */
  def keepsUnmatchedProbeRows: Boolean = false
}

@Internal
object JoinKind {

  /** Each probe row joined with each matching build row. */
  case object Inner extends JoinKind("inner")

  /** Inner, plus each unmatched probe row once with null build columns. */
  case object LeftOuter extends JoinKind("left_outer") {
    override def keepsUnmatchedProbeRows: Boolean = true
  }

  /** Left outer with the sides swapped in the output: the build side is the left input. */
  case object RightOuter extends JoinKind("right_outer") {
    override def buildOnLeft: Boolean = true
    override def keepsUnmatchedProbeRows: Boolean = true
  }

  /** Probe rows with at least one match. */
  case object LeftSemi extends JoinKind("left_semi")

  /** Probe rows with no match (a null key matches nothing, so its row is kept). */
  case object LeftAnti extends JoinKind("left_anti")

  /**
   * `probeKey NOT IN (build keys)`: all probe rows if the build side is empty, none if it has a
   * null key, else the probe rows whose key is not null and matches nothing.
   */
  case object NullAwareLeftAnti extends JoinKind("left_anti")

  val HashJoinKinds: Seq[JoinKind] = Seq(Inner, LeftOuter, RightOuter, LeftSemi, LeftAnti)

  val NestedLoopJoinKinds: Seq[JoinKind] = Seq(Inner, LeftOuter, LeftSemi, LeftAnti)

  /**
   * The kind for a join type string as `Dataset.join` takes it ("inner", "left_outer", "leftanti",
   * "cross", ...), if `operator` supports it.
   */
  def parse(joinType: String, operator: String, supported: Seq[JoinKind]): JoinKind = {
    val kind: Option[JoinKind] = JoinType(joinType) match {
      case SparkInner | SparkCross => Some(Inner)
      case SparkLeftOuter => Some(LeftOuter)
      case SparkRightOuter => Some(RightOuter)
      case SparkLeftSemi => Some(LeftSemi)
      case SparkLeftAnti => Some(LeftAnti)
      case _ => None
    }
    kind.filter(supported.contains).getOrElse {
      throw new IllegalArgumentException(
        s"$operator does not support join type '$joinType'. Supported: " +
          supported.map(_.sparkName).mkString(", ") +
          (if (supported.contains(RightOuter)) " (right_outer with the build side on the left)"
           else "")
      )
    }
  }
}
