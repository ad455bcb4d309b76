package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  AttributeSeq,
  AttributeSet,
  BindReferences,
  EqualTo,
  Expression,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.optimizer.NormalizeFloatingNumbers
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.types.StringType

/**
 * Plans a broadcast join by having Spark analyze the join it stands for, so that column
 * resolution, type coercion of keys and conditions, and the output schema (outer sides nullable)
 * are exactly Spark's.
 */
private[quiver] object JoinPlanner {

  /** An equi-join on `probeKeys(i) = buildKeys(i)`, keys named as `Dataset.col` takes them. */
  def hashJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): JoinSpec = {
    require(probeKeys.nonEmpty, "a hash join needs at least one key")
    require(
      probeKeys.size == buildKeys.size,
      s"probe keys ${probeKeys.mkString(", ")} and build keys ${buildKeys.mkString(", ")} " +
        "differ in number"
    )
    val condition = probeKeys
      .zip(buildKeys)
      .map { case (p, b) => probe.col(p) === build.col(b) }
      .reduce(_ && _)
    val join = analyze(probe, build, condition, kind)
    val (probeSide, buildSide) = sides(join, kind)
    val keys = conjuncts(join.condition.get).map(equiKeys(_, probeSide, buildSide))
    val buildKeyExprs = keys.map(k => NormalizeFloatingNumbers.normalize(k._2))
    val copied = buildColumnsRead(buildKeyExprs, buildSide)
    JoinSpec(
      kind,
      probeKeys = keys.map(k => bind(NormalizeFloatingNumbers.normalize(k._1), probeSide.output)),
      buildColumns = copied.map(bind(_, buildSide.output)),
      buildKeys = buildKeyExprs.map(bind(_, copied)),
      condition = None,
      buildWidth = buildSide.output.size,
      output = join.schema
    )
  }

  /** A join on any condition over probe and build columns. */
  def nestedLoopJoin(
      probe: DataFrame,
      build: DataFrame,
      condition: Column,
      kind: JoinKind
  ): JoinSpec = {
    val join = analyze(probe, build, condition, kind)
    val bound = join.condition.get
    if (bound.find(_.isInstanceOf[SubqueryExpression]).isDefined) {
      throw new IllegalArgumentException(
        s"a broadcast nested loop join condition cannot hold a subquery: $bound"
      )
    }
    val (probeSide, buildSide) = sides(join, kind)
    val copied = buildColumnsRead(Seq(bound), buildSide)
    JoinSpec(
      kind,
      probeKeys = Nil,
      buildColumns = copied.map(bind(_, buildSide.output)),
      buildKeys = Nil,
      condition = Some(bind(bound, probeSide.output ++ copied)),
      buildWidth = buildSide.output.size,
      output = join.schema
    )
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

  /** The join's (probe, build) inputs. */
  private def sides(join: Join, kind: JoinKind): (LogicalPlan, LogicalPlan) =
    if (kind.buildOnLeft) (join.right, join.left) else (join.left, join.right)

  /** The build columns `expressions` read, in build column order. */
  private def buildColumnsRead(
      expressions: Seq[Expression],
      buildSide: LogicalPlan
  ): Seq[Attribute] = {
    val read = AttributeSet(expressions.flatMap(_.references))
    buildSide.output.filter(read.contains)
  }

  private def conjuncts(condition: Expression): Seq[Expression] = condition match {
    case And(left, right) => conjuncts(left) ++ conjuncts(right)
    case other => Seq(other)
  }

  /** The (probe, build) sides of one analyzed key equality. */
  private def equiKeys(
      conjunct: Expression,
      probeSide: LogicalPlan,
      buildSide: LogicalPlan
  ): (Expression, Expression) = conjunct match {
    case EqualTo(l, r) if within(l, probeSide) && within(r, buildSide) =>
      requireBinaryEquality(l)
      (l, r)
    case EqualTo(l, r) if within(r, probeSide) && within(l, buildSide) =>
      requireBinaryEquality(l)
      (r, l)
    case other =>
      throw new IllegalStateException(
        s"Spark analyzed a join key into $other, not an equality of a probe and a build column"
      )
  }

  /** Keys are compared by their bytes; strings of a collation other than Spark's default are not. */
  private def requireBinaryEquality(key: Expression): Unit = {
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
  }

  private def within(e: Expression, side: LogicalPlan): Boolean =
    e.references.nonEmpty && e.references.subsetOf(side.outputSet)

  private def bind(e: Expression, input: Seq[Attribute]): Expression =
    BindReferences.bindReference(e, AttributeSeq(input))
}
