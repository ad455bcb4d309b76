package org.apache.spark.sql.quiver.join

import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.physical.{
  BroadcastMode,
  BroadcastPartitioning,
  Partitioning
}
import org.apache.spark.sql.execution.LeafExecNode
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The build side of a Spark broadcast join, read from a Quiver broadcast: its output is already
 * broadcast in `mode`, so Spark adds no exchange, and the join's tasks read the build side each
 * executor derives once from the decoded broadcast (see [[SharedBuildBroadcast]]).
 *
 * @param relationOutput the broadcast's columns
 * @param filters predicates the optimizer pushed onto the build side, over `relationOutput`
 * @param output the columns the join reads
 * @param shareDecoded false to decode and build in every task (the setting turned off)
 */
final private[quiver] case class SharedBuildExec(
    broadcast: ArrowBroadcast,
    relationOutput: Seq[Attribute],
    filters: Seq[Expression],
    output: Seq[Attribute],
    mode: BroadcastMode,
    shareDecoded: Boolean
) extends LeafExecNode {

  override def nodeName: String = "QuiverSharedBuild"

  override def outputPartitioning: Partitioning = BroadcastPartitioning(mode)

  /**
   * The build side's figures, and those of each read of the broadcast it is built from (one on the
   * driver while Spark generates the join's code, one per task): see [[BroadcastReadSqlMetrics]].
   */
  override lazy val metrics: Map[String, SQLMetric] = Map(
    "buildTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to build the build side"),
    "built" -> SQLMetrics.createMetric(sparkContext, "build sides built"),
    "reused" -> SQLMetrics.createMetric(sparkContext, "build sides reused")
  ) ++ BroadcastReadSqlMetrics(sparkContext).asMap

  override def simpleString(maxFields: Int): String =
    s"$nodeName broadcast ${broadcast.value.id} ${output.mkString("[", ", ", "]")}" +
      (if (filters.isEmpty) "" else filters.mkString(", filters [", ", ", "]")) +
      (if (shareDecoded) "" else ", per task")

  override protected def doExecute(): RDD[InternalRow] =
    throw new UnsupportedOperationException(s"$nodeName is read as a broadcast only")

  override protected[sql] def doExecuteBroadcast[T](): Broadcast[T] =
    sharedBroadcast.asInstanceOf[Broadcast[T]]

  // One per plan, as Spark's exchange keeps one relation: Spark may ask for it more than once
  // while generating code, and each wrapper reads the value on the driver once.
  @transient private lazy val sharedBroadcast =
    new SharedBuildBroadcast(
      broadcast.value,
      new BuildSideDerivation(relationOutput, filters, output, mode),
      shareDecoded,
      SharedBuildBroadcast.Metrics(
        metrics("buildTime"),
        metrics("built"),
        metrics("reused"),
        BroadcastReadSqlMetrics.of(metrics)
      )
    )
}
