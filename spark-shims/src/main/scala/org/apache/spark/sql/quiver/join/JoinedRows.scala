package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow, UnsafeProjection}

/**
 * The output of an inner or outer join: each probe row joined with each build row the matcher
 * finds, and for an outer join each probe row without a match once, with null build columns.
 * Output rows are `UnsafeRow`s copied out of the inputs, reused from one row to the next as Spark's
 * own operators do.
 */
final private[quiver] class JoinedRows(
    probe: Iterator[InternalRow],
    matcher: BuildMatcher,
    spec: JoinSpec
) extends Iterator[InternalRow] {

  private val project = UnsafeProjection.create(spec.output)
  private val joined = new JoinedRow
  private val nullBuildRow = new GenericInternalRow(spec.buildWidth)
  private val buildOnLeft = spec.kind.buildOnLeft
  private val keepUnmatched = spec.kind.keepsUnmatchedProbeRows

  private var probeRow: InternalRow = _
  // The build row to join with `probeRow` next, or null when `probeRow` is done.
  private var pending: InternalRow = _

  override def hasNext: Boolean = {
    while (pending == null && probe.hasNext) {
      probeRow = probe.next()
      matcher.start(probeRow)
      pending = matcher.nextMatch()
      if (pending == null && keepUnmatched) pending = nullBuildRow
    }
    pending != null
  }

  override def next(): InternalRow = {
    if (!hasNext) throw new NoSuchElementException("no more joined rows")
    // Projected before the matcher moves on: the build row is a view the matcher reuses.
    val out =
      if (buildOnLeft) project(joined(pending, probeRow)) else project(joined(probeRow, pending))
    pending = if (pending eq nullBuildRow) null else matcher.nextMatch()
    out
  }
}
