package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Spark 3.4 and 3.5: no uninterruptible resource creation, so opening is a plain call. In a
 * package under `org.apache.spark` because `Dataset.ofRows` is Spark-private.
 */
private[quiver] class Spark3Shim extends SparkShim {

  override val sparkLines: Seq[String] = Seq("3.4", "3.5")

  override def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T = open()

  override def dataFrameOf(spark: SparkSession, plan: LogicalPlan): DataFrame =
    Dataset.ofRows(spark, plan)
}
