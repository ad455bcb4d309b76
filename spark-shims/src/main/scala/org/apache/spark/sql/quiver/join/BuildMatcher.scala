package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{
  Expression,
  JoinedRow,
  Predicate,
  UnsafeProjection,
  UnsafeRow
}

/**
 * Finds the build rows a probe row joins with: `start(probe)`, then `nextMatch()` until it returns
 * null. A returned row is a [[BuildRows]] view, valid until the next call. One per task.
 */
sealed private[quiver] trait BuildMatcher {

  def start(probe: InternalRow): Unit

  /** The next matching build row, or null when there is none. */
  def nextMatch(): InternalRow

  def hasMatch(probe: InternalRow): Boolean = {
    start(probe)
    nextMatch() != null
  }
}

/** Matches by key through a [[BuildSideTable]]. */
final private[quiver] class HashMatcher(
    table: BuildSideTable,
    rows: BuildRows,
    probeKeys: Seq[Expression]
) extends BuildMatcher {

  private val keyOf = UnsafeProjection.create(probeKeys)
  private var entry = BuildSideTable.NoMatch

  override def start(probe: InternalRow): Unit = {
    val key = keyOf(probe)
    entry = if (key.anyNull()) BuildSideTable.NoMatch else table.firstMatch(key)
  }

  override def nextMatch(): InternalRow =
    if (entry == BuildSideTable.NoMatch) null
    else {
      val row = rows.at(table.position(entry))
      entry = table.nextMatch(entry)
      row
    }
}

/**
 * Matches every build row for which `condition` is true. The condition reads a probe row followed
 * by the build columns it uses, copied out of every build row once, when the matcher is made (see
 * [[JoinSpec]]).
 */
final private[quiver] class NestedLoopMatcher(rows: BuildRows, spec: JoinSpec, partitionIndex: Int)
    extends BuildMatcher {

  private val predicate = Predicate.create(spec.condition.get)
  predicate.initialize(partitionIndex)

  // For each build batch, for each of its rows, the columns the condition reads.
  private val conditionColumns: Array[Array[UnsafeRow]] = {
    val copy = UnsafeProjection.create(spec.buildColumns)
    Array.tabulate(rows.batchCount) { batch =>
      Array.tabulate(rows.rowCount(batch))(rowId => copy(rows.row(batch, rowId)).copy())
    }
  }

  private val joined = new JoinedRow
  private var batch = 0
  private var rowId = 0

  override def start(probe: InternalRow): Unit = {
    joined.withLeft(probe)
    batch = 0
    rowId = 0
  }

  override def nextMatch(): InternalRow = {
    var found: InternalRow = null
    while (found == null && batch < rows.batchCount)
      if (rowId < rows.rowCount(batch)) {
        if (predicate.eval(joined.withRight(conditionColumns(batch)(rowId)))) {
          found = rows.row(batch, rowId)
        }
        rowId += 1
      } else {
        batch += 1
        rowId = 0
      }
    found
  }
}
