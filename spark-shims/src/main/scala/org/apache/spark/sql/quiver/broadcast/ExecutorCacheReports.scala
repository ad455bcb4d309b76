package org.apache.spark.sql.quiver.broadcast

import java.util.concurrent.ConcurrentHashMap

import dev.quiver.annotation.Internal
import dev.quiver.spark.ExecutorCacheReport
import org.apache.spark.api.plugin.PluginContext
import org.apache.spark.sql.quiver.QuiverRuntime

/**
 * The executors' cache figures on the driver. Each executor's plugin sends a report after every
 * task that ends there (a message of some twenty numbers, beside the task's own status update);
 * the driver's plugin keeps the latest per executor. Reports may arrive out of order, so the one
 * with the most tasks ended wins.
 *
 * An executor Spark removed (lost, killed, decommissioned) has no report: its JVM and what its
 * cache held are gone, and its last figures would read as memory still held. Spark never gives an
 * id to a second executor, so a report that arrives after the removal is dropped too.
 */
@Internal
final class ExecutorCacheReports {

  private val latest = new ConcurrentHashMap[String, ExecutorCacheReport]()
  private val removed = ConcurrentHashMap.newKeySet[String]()

  def receive(report: ExecutorCacheReport): Unit = {
    latest.merge(
      report.executorId,
      report,
      (kept, arrived) => if (arrived.tasksEnded >= kept.tasksEnded) arrived else kept
    )
    // After the merge: a removal between the check and the merge still takes the report out.
    if (removed.contains(report.executorId)) latest.remove(report.executorId)
    ()
  }

  /** Spark removed `executorId`: its report goes, and any that arrives later is dropped. */
  def executorRemoved(executorId: String): Unit = {
    removed.add(executorId)
    latest.remove(executorId)
    ()
  }

  def byExecutor: Map[String, ExecutorCacheReport] = {
    val reports = Map.newBuilder[String, ExecutorCacheReport]
    latest.forEach((id, report) => reports += id -> report)
    reports.result()
  }
}

@Internal
object ExecutorCacheReports {

  /** The running SparkContext's reports, while its driver has Quiver's plugin. */
  @volatile private var running: Option[ExecutorCacheReports] = None

  def current: Option[ExecutorCacheReports] = running

  def start(): ExecutorCacheReports = synchronized {
    val reports = new ExecutorCacheReports
    running = Some(reports)
    reports
  }

  def stop(reports: ExecutorCacheReports): Unit = synchronized {
    if (running.contains(reports)) running = None
  }

  /**
   * An executor's side: at each task end, lets the cache release the retained broadcasts Spark
   * dropped (so that a drop takes effect at the next task boundary, whether or not that task read
   * a broadcast), then sends the figures.
   */
  final class Sender(context: PluginContext) {

    private var tasksEnded = 0L

    def taskEnded(): Unit = {
      QuiverRuntime.broadcastCache.checkRetained()
      val report = synchronized {
        tasksEnded += 1
        new ExecutorCacheReport(context.executorID(), tasksEnded, CacheMetrics.figures())
      }
      context.send(report)
    }
  }
}
