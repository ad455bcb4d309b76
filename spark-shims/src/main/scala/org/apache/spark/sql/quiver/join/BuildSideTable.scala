package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.catalyst.expressions.{
  BoundReference,
  Expression,
  UnsafeProjection,
  UnsafeRow
}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The build side of a broadcast hash join: for each distinct key, the positions (see
 * [[BuildRows]]) of the build rows that carry it. Keys compare as Spark's hash joins compare them:
 * by the bytes of their `UnsafeRow`, floating point keys normalized first (NaN equals NaN, -0.0
 * equals 0.0), and a key with a null column matches nothing. Keys are computed from a copy of the
 * build columns they read (see [[JoinSpec]]).
 *
 * The table is a pure function of the decoded broadcast and the key expressions: it holds copies
 * of the keys and positions, no batch and no row, and is never changed after it is built. Every
 * task of an executor would build the same table from its own views of a shared broadcast, so
 * building it once per executor (a later issue) plugs in where [[BroadcastJoinTask]] calls
 * [[BuildSideTable.build]]: the task takes the executor's table, derived from the cached
 * broadcast, instead, and probes it through its own [[BuildRows]]; no join code changes.
 *
 * Probing: `var e = firstMatch(key); while (e != NoMatch) { use(position(e)); e = nextMatch(e) }`.
 */
final private[quiver] class BuildSideTable private (
    index: java.util.HashMap[UnsafeRow, Integer],
    positions: Array[Long],
    nextWithSameKey: Array[Int],
    /** Build rows, null keys included. */
    val rowCount: Long,
    /** Build rows with a null in some key column; they match nothing. */
    val nullKeyRows: Long
) {

  def isEmpty: Boolean = rowCount == 0

  def hasNullKey: Boolean = nullKeyRows > 0

  /** The first entry for `key` (which must have no null column), or [[BuildSideTable.NoMatch]]. */
  def firstMatch(key: UnsafeRow): Int = {
    val entry = index.get(key)
    if (entry == null) BuildSideTable.NoMatch else entry.intValue
  }

  /** The entry after `entry` with the same key, or [[BuildSideTable.NoMatch]]. */
  def nextMatch(entry: Int): Int = nextWithSameKey(entry)

  /** The build row of `entry`, as a [[BuildRows]] position. */
  def position(entry: Int): Long = positions(entry)
}

private[quiver] object BuildSideTable {

  val NoMatch: Int = -1

  /**
   * The table of `batches`, keyed by `keys`, which read `keyColumns` (copied out of a build row).
   */
  def build(
      batches: IndexedSeq[ColumnarBatch],
      keyColumns: Seq[Expression],
      keys: Seq[Expression]
  ): BuildSideTable = {
    val rowCount = batches.map(_.numRows().toLong).sum
    // Spark's broadcast row limit keeps real build sides far below this.
    if (rowCount > Int.MaxValue) {
      throw new IllegalArgumentException(s"a build side of $rowCount rows is too large to index")
    }
    val rows = new BuildRows(batches)
    val copyKeyColumns = UnsafeProjection.create(keyColumns)
    // Plain column keys (no cast, no float normalization) are the copy itself.
    val keysAreTheCopy = keys.size == keyColumns.size && keys.zipWithIndex.forall {
      case (BoundReference(ordinal, _, _), i) => ordinal == i
      case _ => false
    }
    val keyOf: UnsafeRow => UnsafeRow =
      if (keysAreTheCopy) identity
      else {
        val project = UnsafeProjection.create(keys)
        copy => project(copy)
      }
    val index = new java.util.HashMap[UnsafeRow, Integer]()
    val positions = new Array[Long](rowCount.toInt)
    val nextWithSameKey = new Array[Int](rowCount.toInt)
    var entries = 0
    var nullKeyRows = 0L
    var batch = 0
    while (batch < rows.batchCount) {
      var rowId = 0
      while (rowId < rows.rowCount(batch)) {
        val key = keyOf(copyKeyColumns(rows.row(batch, rowId)))
        if (key.anyNull()) nullKeyRows += 1
        else {
          val head = index.get(key)
          positions(entries) = BuildRows.position(batch, rowId)
          nextWithSameKey(entries) = if (head == null) NoMatch else head.intValue
          // Putting a key already present keeps the stored key: only a new key needs a copy.
          index.put(if (head == null) key.copy() else key, Integer.valueOf(entries))
          entries += 1
        }
        rowId += 1
      }
      batch += 1
    }
    new BuildSideTable(index, positions, nextWithSameKey, rowCount, nullKeyRows)
  }
}
