package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.quiver.ReadFigures

/**
 * What the Quiver build sides of an executed query did, from their SQL metrics: builds, and the
 * reads of the broadcast they were built from (the driver's and the tasks').
 */
final case class SharedBuilds(nodes: Int, built: Long, reused: Long, reads: ReadFigures)

object SharedBuilds {

  def of(executed: DataFrame): SharedBuilds = {
    val nodes = shared(executed.queryExecution.executedPlan)
    def sum(key: String): Long = nodes.map(_.metrics(key).value).sum
    SharedBuilds(nodes.size, sum("built"), sum("reused"), readFigures(sum))
  }

  /** The ids of the read metrics of the query's build sides, to find them in task updates. */
  def readMetricIds(executed: DataFrame): Seq[Long] =
    shared(executed.queryExecution.executedPlan).flatMap(node => ReadKeys.map(node.metrics(_).id))

  /** One task's read figures in its updates of the build sides' metrics, by accumulator id. */
  def taskReads(executed: DataFrame, updates: Map[Long, Long]): ReadFigures = {
    val nodes = shared(executed.queryExecution.executedPlan)
    readFigures(key => nodes.map(n => updates.getOrElse(n.metrics(key).id, 0L)).sum)
  }

  /** The keys of a Quiver plan node's read metrics, in the order of [[ReadFigures]]' fields. */
  private val ReadKeys = Seq(
    "broadcastDecodeTime",
    "broadcastWaitTime",
    "broadcastReadsDecoded",
    "broadcastReadsDecodedPrivately",
    "broadcastReadsShared",
    "broadcastReadsRetained"
  )

  /** The read figures, each the value of one of [[ReadKeys]]. */
  def readFigures(value: String => Long): ReadFigures = {
    val v = ReadKeys.map(value)
    ReadFigures(v(0), v(1), v(2), v(3), v(4), v(5))
  }

  private def shared(plan: SparkPlan): Seq[SharedBuildExec] = plan match {
    case adaptive: AdaptiveSparkPlanExec => shared(adaptive.executedPlan)
    case stage: QueryStageExec => shared(stage.plan)
    case build: SharedBuildExec => Seq(build)
    case other => other.children.flatMap(shared)
  }
}
