package dev.quiver.bench

import dev.quiver.bench.BroadcastJoinBench.ExecutorCounts
import org.apache.spark.SparkContext
import org.apache.spark.sql.quiver.cluster.TaskEndCounts

/** On a cluster: each executor's decodes and tables built, from the reports of Quiver's plugin. */
final class ExecutorFigures(sc: SparkContext) {

  private val taskEnds = new TaskEndCounts
  sc.addSparkListener(taskEnds)

  /** Every executor's counts once it has reported every task that ended on it. */
  def now(): Map[String, ExecutorCounts] =
    taskEnds.awaitReports(sc, taskEnds.executors)("(the bench's cluster)").map { case (id, r) =>
      id -> ExecutorCounts(
        r("broadcast.decodes") + r("broadcast.privateDecodes"),
        r("broadcast.derivedBuilds")
      )
    }

  /** What each executor decoded and built since `before`. */
  def growthSince(before: Map[String, ExecutorCounts]): Map[String, ExecutorCounts] =
    now().map { case (id, after) =>
      val was = before.getOrElse(id, ExecutorCounts(0, 0))
      id -> ExecutorCounts(after.decodes - was.decodes, after.builds - was.builds)
    }
}
