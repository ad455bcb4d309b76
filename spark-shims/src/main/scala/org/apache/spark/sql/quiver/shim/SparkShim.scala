package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.quiver.SparkTaskScope

/**
 * What differs between the Spark release lines Quiver supports. Everything else is written once
 * in this module and compiled against each release.
 */
private[quiver] trait SparkShim {

  /** The `major.minor` Spark lines this shim serves, e.g. `Seq("4.0", "4.1")`. */
  def sparkLines: Seq[String]

  /**
   * Opens a resource so that a task kill cannot interrupt the opening half way and leak it. Spark
   * 4.0 added `TaskContext.createResourceUninterruptibly` for exactly this; before it, opening is
   * a plain call.
   */
  def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T

  /**
   * A `DataFrame` of a logical plan (a join over a Quiver broadcast). Spark 4.0 moved `Dataset.ofRows`
   * to the classic implementation.
   */
  def dataFrameOf(spark: SparkSession, plan: LogicalPlan): DataFrame

  /** Quiver's view of a running Spark task. */
  def taskScope(context: TaskContext): SparkTaskScope = new SparkTaskScope(context)
}
