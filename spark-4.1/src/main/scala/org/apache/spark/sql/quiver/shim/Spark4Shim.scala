package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import org.apache.spark.TaskContext
import org.apache.spark.sql.{classic, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.quiver.SparkTaskScope

/**
 * Spark 4.0 to 4.2. In a package under `org.apache.spark` because
 * `TaskContext.createResourceUninterruptibly` and `Dataset.ofRows` are Spark-private. What differs
 * between these lines is in [[TaskKills]], one source per line group.
 */
private[quiver] class Spark4Shim extends SparkShim {

  override val sparkLines: Seq[String] = TaskKills.sparkLines

  override def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T =
    if (context == null) open() else context.createResourceUninterruptibly(open())

  override def dataFrameOf(spark: SparkSession, plan: LogicalPlan): DataFrame =
    classic.Dataset.ofRows(spark.asInstanceOf[classic.SparkSession], plan)

  override def taskScope(context: TaskContext): SparkTaskScope = TaskKills.taskScope(context)
}
