package dev.quiver.spark

import dev.quiver.annotation.Public
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.ArrowBatchIterator
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * A `DataFrame`'s rows as Arrow-backed `ColumnarBatch`es (`ArrowColumnVector` columns laid out as
 * Spark's own Arrow conversion lays them out): the input [[shuffle.QuiverShuffle.exchange]] takes.
 */
@Public
object ArrowBatches {

  /** Rows per batch when none is given. */
  final val DefaultRowsPerBatch = 4096

  /**
   * Each partition of `df` as batches of up to `rowsPerBatch` rows. A task reuses one batch: it is
   * valid until the iterator is asked for the next one, and freed when the task completes.
   * Timestamps are written in the session's time zone, as Spark's own Arrow conversion writes them.
   */
  def of(df: DataFrame, rowsPerBatch: Int): RDD[ColumnarBatch] = {
    require(rowsPerBatch > 0, s"rowsPerBatch must be positive, got $rowsPerBatch")
    val schema = df.schema
    val timeZoneId = SQLConf.get.sessionLocalTimeZone
    df.queryExecution.toRdd.mapPartitions { rows =>
      new ArrowBatchIterator(rows, schema, timeZoneId, rowsPerBatch)
    }
  }

  /** [[of]] with [[DefaultRowsPerBatch]] rows per batch. */
  def of(df: DataFrame): RDD[ColumnarBatch] = of(df, DefaultRowsPerBatch)
}
