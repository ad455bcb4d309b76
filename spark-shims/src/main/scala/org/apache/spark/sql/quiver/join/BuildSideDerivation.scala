package org.apache.spark.sql.quiver.join

import dev.quiver.broadcast.{BroadcastReader, Derivation, DerivedValue}
import org.apache.arrow.memory.BufferAllocator
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  BindReferences,
  Expression,
  Predicate,
  UnsafeProjection
}
import org.apache.spark.sql.catalyst.plans.physical.BroadcastMode
import org.apache.spark.sql.execution.joins.HashedRelationBroadcastMode
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.util.SizeEstimator

/**
 * What a join's build side is, derived from a decoded broadcast: its rows that pass `filters`,
 * projected to `output`, transformed by Spark's own `mode` (a `HashedRelation` for a hash join,
 * an array of rows for a nested loop join). Serializable: it travels with the join's tasks, and
 * the first task of an executor to need it builds it (see [[DerivedValue]]).
 *
 * @param relationOutput the broadcast's columns
 * @param filters predicates over `relationOutput` the optimizer pushed onto the build side
 * @param output the build side's columns, a subset of `relationOutput`
 */
final private[quiver] class BuildSideDerivation(
    relationOutput: Seq[Attribute],
    filters: Seq[Expression],
    output: Seq[Attribute],
    mode: BroadcastMode
) extends Serializable {

  private val boundFilter: Option[Expression] =
    filters.reduceOption(And).map(BindReferences.bindReference(_, relationOutput))

  private val columns: Seq[Int] = output.map(a => relationOutput.indexWhere(_.exprId == a.exprId))
  require(columns.forall(_ >= 0), s"build columns $output are not all in $relationOutput")

  /**
   * Equal for equal derivations of one broadcast, in any query: positions and bound expressions
   * only, no attribute ids.
   */
  val key: BuildSideDerivation.Key =
    BuildSideDerivation.Key(mode.canonicalized, columns, boundFilter.map(_.canonicalized))

  /** Builds the build side from `reader`; called once per executor and key. */
  def build(reader: BroadcastReader): DerivedValue[AnyRef] = {
    // Each batch's row is a reused view, read before the next is asked for.
    val batchRows: Iterator[InternalRow] =
      new ColumnarBatches(reader).flatMap(batch => Iterator.tabulate(batch.numRows())(batch.getRow))
    val project = UnsafeProjection.create(output, relationOutput)
    val rows = boundFilter match {
      case None => batchRows.map(project)
      case Some(filter) =>
        val predicate = Predicate.create(filter)
        predicate.initialize(0)
        // Copied to an UnsafeRow first: generic expressions over columnar rows skip null checks.
        val asUnsafe = UnsafeProjection.create(relationOutput, relationOutput)
        batchRows.map(asUnsafe).filter(predicate.eval).map(project)
    }
    val rowHint = Some(reader.rowCount())
    mode match {
      case hashed: HashedRelationBroadcastMode =>
        // The relation copies each row into its own pages.
        val relation = hashed.transform(rows, rowHint)
        DerivedValue.of[AnyRef](relation, relation.estimatedSize, () => relation.close())
      case other =>
        val value = other.transform(rows.map(_.copy()), rowHint).asInstanceOf[AnyRef]
        DerivedValue.of[AnyRef](value, SizeEstimator.estimate(value), () => ())
    }
  }

  /** As the cache takes it: the allocator is unused, a Spark build side lives on the heap. */
  def asDerivation: Derivation[AnyRef] = new Derivation[AnyRef] {
    override def build(reader: BroadcastReader, allocator: BufferAllocator): DerivedValue[AnyRef] =
      BuildSideDerivation.this.build(reader)
  }
}

private[quiver] object BuildSideDerivation {

  final case class Key(mode: BroadcastMode, columns: Seq[Int], filter: Option[Expression]) {

    /** Short, for the cache's log lines. */
    override def toString: String = {
      val shape = mode match {
        case hashed: HashedRelationBroadcastMode =>
          hashed.key.map(_.sql).mkString("table on ", ", ", "")
        case _ => "rows"
      }
      s"build side ($shape; columns ${columns.mkString(", ")}" +
        filter.fold("")(f => s"; where ${f.sql}") + ")"
    }
  }
}
