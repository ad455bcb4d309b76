package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.vectorized.{ColumnarBatch, ColumnarBatchRow, ColumnVector}

/**
 * One reader's view of the build side's rows, read in place from the batches. A row is valid
 * until the next row of the same batch is asked for. The views are mutable and the batches are
 * not, so every task (every thread) makes its own over the same batches.
 *
 * A row is found by its position: its batch and its index in the batch, packed in a `Long` (see
 * [[BuildRows.position]]). Positions depend only on the broadcast, not on whose views read it.
 */
final private[quiver] class BuildRows(batches: IndexedSeq[ColumnarBatch]) {

  private val views: Array[ColumnarBatchRow] = batches.map { batch =>
    new ColumnarBatchRow(Array.tabulate[ColumnVector](batch.numCols())(batch.column))
  }.toArray

  def batchCount: Int = views.length

  def rowCount(batch: Int): Int = batches(batch).numRows()

  def row(batch: Int, rowId: Int): InternalRow = {
    val view = views(batch)
    view.rowId = rowId
    view
  }

  def at(position: Long): InternalRow =
    row(BuildRows.batchOf(position), BuildRows.rowIdOf(position))
}

private[quiver] object BuildRows {

  def position(batch: Int, rowId: Int): Long = (batch.toLong << 32) | (rowId.toLong & 0xffffffffL)

  def batchOf(position: Long): Int = (position >>> 32).toInt

  def rowIdOf(position: Long): Int = position.toInt
}
