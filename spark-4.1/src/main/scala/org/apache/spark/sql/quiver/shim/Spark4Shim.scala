package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{classic, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.StructType

/**
 * Spark 4.0 and 4.1. In a package under `org.apache.spark` because
 * `TaskContext.createResourceUninterruptibly` and `internalCreateDataFrame` are Spark-private.
 */
private[quiver] class Spark4Shim extends SparkShim {

  override val sparkLines: Seq[String] = Seq("4.0", "4.1")

  override def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T =
    if (context == null) open() else context.createResourceUninterruptibly(open())

  override def createDataFrame(
      spark: SparkSession,
      rows: RDD[InternalRow],
      schema: StructType
  ): DataFrame =
    spark.asInstanceOf[classic.SparkSession].internalCreateDataFrame(rows, schema)
}
