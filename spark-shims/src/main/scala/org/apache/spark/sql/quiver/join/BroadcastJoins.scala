package org.apache.spark.sql.quiver.join

import dev.quiver.annotation.Internal
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  AttributeMap,
  EqualTo,
  Expression,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.plans.logical.{Join, JoinHint, LogicalPlan}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.sql.types.StringType

/**
 * Quiver's broadcast joins, behind [[dev.quiver.spark.join.QuiverJoins]]: Spark analyzes the join
 * of the probe side with the build side, and the build side is then replaced by a
 * [[QuiverBroadcastRelation]] of the broadcast, which [[SharedBuildStrategy]] plans as the build
 * side of Spark's own broadcast join. So column resolution, type coercion, the output schema, the
 * optimizer (column pruning, filter push-down) and the probe are Spark's; the join is checked
 * before its build side is broadcast.
 */
@Internal
object BroadcastJoins {

  def hashJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): DataFrame = {
    val join = analyze(probe, build, hashCondition(probe, build, probeKeys, buildKeys, kind), kind)
    checkKeys(join)
    withBroadcast(probe, join, kind, ArrowBroadcast.of(build))
  }

  /** A hash join against a broadcast already made; its columns are named as in its schema. */
  def hashJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): DataFrame = {
    val relation = relationOf(probe, build)
    val join =
      analyze(probe, relation, hashCondition(probe, relation, probeKeys, buildKeys, kind), kind)
    checkKeys(join)
    withBroadcast(probe, join, kind, build)
  }

  def nestedLoopJoin(
      probe: DataFrame,
      build: DataFrame,
      condition: Column,
      kind: JoinKind
  ): DataFrame = {
    val join = analyze(probe, build, condition, kind)
    checkNoSubquery(join)
    withBroadcast(probe, join, kind, ArrowBroadcast.of(build))
  }

  def nestedLoopJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      condition: Column,
      kind: JoinKind
  ): DataFrame = {
    val join = analyze(probe, relationOf(probe, build), condition, kind)
    checkNoSubquery(join)
    withBroadcast(probe, join, kind, build)
  }

  /** A `DataFrame` of the broadcast's rows, in `probe`'s session. */
  private def relationOf(probe: DataFrame, build: ArrowBroadcast): DataFrame = {
    SharedBuildStrategy.install(probe.sparkSession)
    SparkShims.get.dataFrameOf(probe.sparkSession, QuiverBroadcastRelation(build, shareDecoded))
  }

  private def hashCondition(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): Column = {
    require(probeKeys.nonEmpty, "a hash join needs at least one key")
    require(
      probeKeys.size == buildKeys.size,
      s"probe keys ${probeKeys.mkString(", ")} and build keys ${buildKeys.mkString(", ")} " +
        "differ in number"
    )
    val equalities = probeKeys.zip(buildKeys).map { case (p, b) => probe.col(p) === build.col(b) }
    if (kind == JoinKind.NullAwareLeftAnti) {
      require(equalities.size == 1, "a null-aware anti join has one key")
      // What Spark rewrites `NOT IN` into, and plans as a null-aware anti join.
      equalities.head || equalities.head.isNull
    } else equalities.reduce(_ && _)
  }

  private def analyze(
      probe: DataFrame,
      build: DataFrame,
      condition: Column,
      kind: JoinKind
  ): Join = {
    val joined =
      if (kind.buildOnLeft) build.join(probe, condition, kind.sparkName)
      else probe.join(build, condition, kind.sparkName)
    joined.queryExecution.analyzed match {
      case join: Join if join.condition.isDefined => join
      case other =>
        throw new IllegalStateException(s"Spark analyzed the join into an unexpected plan:\n$other")
    }
  }

  /**
   * The analyzed `join` with `broadcast` as its build side, in place of the side it was analyzed
   * with: the broadcast holds that side's columns in that order.
   */
  private def withBroadcast(
      probe: DataFrame,
      join: Join,
      kind: JoinKind,
      broadcast: ArrowBroadcast
  ): DataFrame = {
    val spark = probe.sparkSession
    SharedBuildStrategy.install(spark)
    val analyzedBuild = if (kind.buildOnLeft) join.left else join.right
    val relation = QuiverBroadcastRelation(broadcast, shareDecoded)
    require(
      relation.output.map(_.dataType) == analyzedBuild.output.map(_.dataType),
      s"the broadcast's columns ${relation.output} are not the build side's ${analyzedBuild.output}"
    )
    val renamed = AttributeMap(analyzedBuild.output.zip(relation.output))
    val condition = join.condition.map(_.transform { case a: Attribute =>
      renamed.getOrElse(a, a)
    })
    val plan: LogicalPlan =
      if (kind.buildOnLeft) Join(relation, join.right, join.joinType, condition, JoinHint.NONE)
      else Join(join.left, relation, join.joinType, condition, JoinHint.NONE)
    SparkShims.get.dataFrameOf(spark, plan)
  }

  /** The session's sharing setting now, on the driver when the join is called. */
  private def shareDecoded: Boolean = QuiverConf.shareDecodedBroadcasts(SQLConf.get)

  /** Keys are compared by their bytes; strings of a collation other than Spark's default are not. */
  private def checkKeys(join: Join): Unit =
    conjuncts(join.condition.get).foreach {
      case EqualTo(key, _) =>
        val collated = key.dataType.existsRecursively {
          case s: StringType => s != StringType
          case _ => false
        }
        if (collated) {
          throw new IllegalArgumentException(
            "Quiver's broadcast hash join compares keys by their bytes, which the collation of " +
              s"$key (${key.dataType.catalogString}) does not; use a nested loop join"
          )
        }
      case _ =>
    }

  private def checkNoSubquery(join: Join): Unit = {
    val condition = join.condition.get
    if (condition.find(_.isInstanceOf[SubqueryExpression]).isDefined) {
      throw new IllegalArgumentException(
        s"a broadcast nested loop join condition cannot hold a subquery: $condition"
      )
    }
  }

  private def conjuncts(condition: Expression): Seq[Expression] = condition match {
    case And(left, right) => conjuncts(left) ++ conjuncts(right)
    case other => Seq(other)
  }
}
