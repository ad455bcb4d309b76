package dev.quiver.spark

import dev.quiver.annotation.Public

/**
 * One executor's decoded-broadcast cache, as its Quiver plugin last reported it to the driver (see
 * [[QuiverMetrics.executorBroadcastCaches]]).
 *
 * @param executorId
 *   Spark's id of the executor
 * @param tasksEnded
 *   tasks that ended on the executor (succeeded or failed) before this report, since it started
 * @param figures
 *   the cache's figures after those tasks, by the names of the plugin's gauges (`broadcast.decodes`,
 *   `broadcast.retainedReads`, `allocatedBytes`, ...: the table of `docs/tuning.md`, "Metrics")
 */
@Public
final case class ExecutorCacheReport(
    executorId: String,
    tasksEnded: Long,
    figures: Map[String, Long]
) {

  /** One figure by its gauge's name; fails on a name the plugin does not report. */
  def apply(name: String): Long =
    figures.getOrElse(
      name,
      throw new NoSuchElementException(
        s"no figure $name; the figures are ${figures.keys.toSeq.sorted.mkString(", ")}"
      )
    )
}
