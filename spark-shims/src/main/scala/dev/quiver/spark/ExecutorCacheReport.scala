package dev.quiver.spark

import java.util.{Collections, TreeMap => JTreeMap}

import dev.quiver.annotation.{Internal, Public}

/**
 * One executor's decoded-broadcast cache, as its Quiver plugin last reported it to the driver (see
 * [[QuiverMetrics.executorBroadcastCaches]]). Quiver's plugin makes these; users read them.
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
final class ExecutorCacheReport @Internal() (
    val executorId: String,
    val tasksEnded: Long,
    val figures: Map[String, Long]
) extends Serializable {

  /** [[figures]] for callers in Java: unmodifiable, sorted by name. */
  def figuresAsJava: java.util.Map[String, java.lang.Long] = {
    val sorted = new JTreeMap[String, java.lang.Long]()
    figures.foreach { case (name, value) => sorted.put(name, value) }
    Collections.unmodifiableMap(sorted)
  }

  /** One figure by its gauge's name; fails on a name the plugin does not report. */
  def apply(name: String): Long =
    figures.getOrElse(
      name,
      throw new NoSuchElementException(
        s"no figure $name; the figures are ${figures.keys.toSeq.sorted.mkString(", ")}"
      )
    )

  override def equals(other: Any): Boolean = other match {
    case that: ExecutorCacheReport =>
      executorId == that.executorId && tasksEnded == that.tasksEnded && figures == that.figures
    case _ => false
  }

  override def hashCode: Int = (executorId, tasksEnded, figures).##

  override def toString: String = s"ExecutorCacheReport($executorId, $tasksEnded, $figures)"
}
