package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}

/**
 * A task's rows as Arrow-backed batches of up to `rowsPerBatch` rows, written by Spark's own
 * `ArrowWriter` into one reused root: refilled on every `next()`, freed when the task completes.
 */
@Internal
class ArrowBatchIterator(
    rows: Iterator[InternalRow],
    schema: StructType,
    timeZoneId: String,
    rowsPerBatch: Int
) extends Iterator[ColumnarBatch] {

  require(rowsPerBatch > 0, s"rowsPerBatch must be positive, got $rowsPerBatch")

  private val allocator =
    QuiverRuntime.allocator.newChildAllocator("quiver-dataframe-batches", 0, Long.MaxValue)
  private val root = VectorSchemaRoot.create(ArrowSchemas.toArrow(schema, timeZoneId), allocator)
  private val writer = ArrowWriter.create(root)

  private val columns: Array[ColumnVector] =
    Array.tabulate(root.getFieldVectors.size())(i => new ArrowColumnVector(root.getVector(i)))

  SparkShims.get.taskScope(TaskContext.get()).onCompletion { () =>
    root.close()
    allocator.close()
  }

  override def hasNext: Boolean = rows.hasNext

  override def next(): ColumnarBatch = {
    if (!hasNext) throw new NoSuchElementException("no more rows")
    writer.reset()
    var n = 0
    while (n < rowsPerBatch && rows.hasNext) {
      writer.write(rows.next())
      n += 1
    }
    writer.finish()
    new ColumnarBatch(columns, n)
  }
}
