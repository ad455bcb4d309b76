package org.apache.spark.sql.quiver.shuffle

import dev.quiver.spark.{QuiverRuntime, SparkShims}
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.ArrowSchemas
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}

/** A `DataFrame`'s rows as Arrow-backed batches, the input an exchange takes. */
object ArrowInput {

  /** Each partition's rows in batches of `rowsPerBatch`, written by Spark's `ArrowWriter`. */
  def batches(df: DataFrame, rowsPerBatch: Int): RDD[ColumnarBatch] = {
    val schema = df.schema
    val timeZoneId = SQLConf.get.sessionLocalTimeZone
    df.queryExecution.toRdd.mapPartitions { rows =>
      new ArrowBatchIterator(rows, schema, timeZoneId, rowsPerBatch)
    }
  }
}

/** One reused batch: refilled on every `next()`, freed when the task completes. */
private class ArrowBatchIterator(
    rows: Iterator[InternalRow],
    schema: StructType,
    timeZoneId: String,
    rowsPerBatch: Int
) extends Iterator[ColumnarBatch] {

  private val allocator =
    QuiverRuntime.allocator.newChildAllocator("quiver-test-input", 0, Long.MaxValue)
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
