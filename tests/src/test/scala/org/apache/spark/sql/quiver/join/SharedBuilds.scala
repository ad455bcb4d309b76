package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}

/** What the Quiver build sides of an executed query did, from their SQL metrics. */
final case class SharedBuilds(nodes: Int, built: Long, reused: Long)

object SharedBuilds {

  def of(executed: DataFrame): SharedBuilds = {
    val nodes = shared(executed.queryExecution.executedPlan)
    SharedBuilds(
      nodes.size,
      nodes.map(_.metrics("built").value).sum,
      nodes.map(_.metrics("reused").value).sum
    )
  }

  private def shared(plan: SparkPlan): Seq[SharedBuildExec] = plan match {
    case adaptive: AdaptiveSparkPlanExec => shared(adaptive.executedPlan)
    case stage: QueryStageExec => shared(stage.plan)
    case build: SharedBuildExec => Seq(build)
    case other => other.children.flatMap(shared)
  }
}
