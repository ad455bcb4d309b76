package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType

/**
 * A planned broadcast join: what each task needs, with every expression bound to column
 * positions.
 *
 * Expressions never read the build batches directly: the build columns they use are first copied
 * out into an `UnsafeRow` (`buildColumns`), because Spark's columnar rows and arrays skip the null
 * check when an expression reads a value generically (an interpreted `transform` over an array
 * with a null element fails on them). Plain projections, which check, read the batches in place.
 *
 * @param probeKeys hash join keys over a probe row (empty for a nested loop join)
 * @param buildColumns the build columns that `buildKeys` or `condition` read, over a build row
 * @param buildKeys hash join keys over the copied build columns, of the types of `probeKeys`
 * @param condition nested loop join condition over a probe row followed by the copied build
 *   columns
 * @param buildWidth columns of a build row
 * @param output the join's output, as Spark's join of the same inputs gives it
 */
final private[quiver] case class JoinSpec(
    kind: JoinKind,
    probeKeys: Seq[Expression],
    buildColumns: Seq[Expression],
    buildKeys: Seq[Expression],
    condition: Option[Expression],
    buildWidth: Int,
    output: StructType
) {

  def isHashJoin: Boolean = buildKeys.nonEmpty
}
