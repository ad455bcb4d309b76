package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.planning.{
  ExtractEquiJoinKeys,
  ExtractSingleColumnNullAwareAntiJoin
}
import org.apache.spark.sql.catalyst.plans.{
  Cross,
  ExistenceJoin,
  Inner,
  JoinType,
  LeftAnti,
  LeftOuter,
  LeftSemi,
  RightOuter
}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.plans.physical.{BroadcastDistribution, IdentityBroadcastMode}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, BroadcastNestedLoopJoinExec}

/**
 * Plans a join whose build side is a [[QuiverBroadcastRelation]] as Spark's own broadcast hash
 * (or nested loop) join, so that the probe is Spark's, code generation included, and only the build
 * side is Quiver's: a [[SharedBuildExec]] that each executor derives once from the decoded
 * broadcast. Joins Spark's broadcast joins cannot run with that side as the build side (a full
 * outer join, a left outer join with the broadcast on the left) are left to Spark's planning, which
 * reads the relation through a [[BroadcastScanExec]].
 */
private[quiver] object SharedBuildStrategy extends SparkStrategy {

  /** Adds the strategy to `spark`'s planner, once. */
  def install(spark: SparkSession): Unit = {
    val experimental = spark.experimental
    experimental.synchronized {
      if (!experimental.extraStrategies.contains(this)) {
        experimental.extraStrategies = experimental.extraStrategies :+ this
      }
    }
  }

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case join @ ExtractSingleColumnNullAwareAntiJoin(probeKeys, buildKeys)
        if SharedSide.unapply(join.right).isDefined =>
      val hashJoin = BroadcastHashJoinExec(
        probeKeys,
        buildKeys,
        LeftAnti,
        BuildRight,
        None,
        planLater(join.left),
        placeholder(join.right),
        isNullAwareAntiJoin = true
      )
      Seq(withSharedBuild(hashJoin, BuildRight, join.right))

    case ExtractEquiJoinKeys(joinType, leftKeys, rightKeys, condition, _, left, right, _) =>
      buildSide(joinType, left, right).toSeq.map { side =>
        val (l, r) = children(side, left, right)
        val hashJoin =
          BroadcastHashJoinExec(leftKeys, rightKeys, joinType, side, condition, l, r)
        withSharedBuild(hashJoin, side, if (side == BuildLeft) left else right)
      }

    case Join(left, right, joinType, condition, _) =>
      buildSide(joinType, left, right).toSeq.map { side =>
        val (l, r) = children(side, left, right)
        val loopJoin = BroadcastNestedLoopJoinExec(l, r, side, joinType, condition)
        withSharedBuild(loopJoin, side, if (side == BuildLeft) left else right)
      }

    case relation: QuiverBroadcastRelation =>
      Seq(BroadcastScanExec(relation.broadcast, relation.output, relation.shareDecoded))

    case _ => Nil
  }

  /** The side Quiver builds, if one side is a Quiver broadcast Spark can build from. */
  private def buildSide(joinType: JoinType, left: LogicalPlan, right: LogicalPlan) = {
    val rightBuilds = joinType match {
      case Inner | Cross | LeftOuter | LeftSemi | LeftAnti | _: ExistenceJoin => true
      case _ => false
    }
    val leftBuilds = joinType match {
      case Inner | Cross | RightOuter => true
      case _ => false
    }
    if (rightBuilds && SharedSide.unapply(right).isDefined) Some(BuildRight)
    else if (leftBuilds && SharedSide.unapply(left).isDefined) Some(BuildLeft)
    else None
  }

  private def children(side: BuildSide, left: LogicalPlan, right: LogicalPlan) =
    if (side == BuildLeft) (placeholder(left), planLater(right))
    else (planLater(left), placeholder(right))

  /** Stands in for the build side until the join says in which mode it wants it broadcast. */
  private def placeholder(build: LogicalPlan): SharedBuildExec = build match {
    case SharedSide(relation, filters) =>
      SharedBuildExec(
        relation.broadcast,
        relation.output,
        filters,
        build.output,
        IdentityBroadcastMode,
        relation.shareDecoded
      )
    case other => throw new IllegalStateException(s"not a Quiver build side: $other")
  }

  /** `join` with its build side broadcast in the mode `join` requires of it. */
  private def withSharedBuild(join: SparkPlan, side: BuildSide, build: LogicalPlan): SparkPlan = {
    val index = if (side == BuildLeft) 0 else 1
    val mode = join.requiredChildDistribution(index) match {
      case BroadcastDistribution(mode) => mode
      case other => throw new IllegalStateException(s"$join requires $other of its build side")
    }
    val shared = placeholder(build).copy(mode = mode)
    join.withNewChildren(join.children.updated(index, shared))
  }

  /**
   * A Quiver broadcast under the projections of columns and the filters the optimizer put over
   * it: `(relation, filters)`.
   */
  private object SharedSide {

    def unapply(plan: LogicalPlan): Option[(QuiverBroadcastRelation, Seq[Expression])] =
      plan match {
        case relation: QuiverBroadcastRelation => Some((relation, Nil))
        case Filter(condition, SharedSide(relation, filters)) =>
          Some((relation, filters :+ condition))
        case Project(columns, SharedSide(relation, filters))
            if columns.forall(_.isInstanceOf[Attribute]) =>
          Some((relation, filters))
        case _ => None
      }
  }
}
