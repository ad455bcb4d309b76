package org.apache.spark.sql.quiver.cluster

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import dev.quiver.spark.{ExecutorCacheReport, QuiverMetrics}
import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/**
 * The tasks Spark saw end on each executor: what an executor's Quiver report must count before it
 * tells a whole job (reports travel apart from the tasks' status updates).
 */
final class TaskEndCounts extends SparkListener {

  private val ended = new ConcurrentHashMap[String, AtomicLong]()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit = {
    ended.computeIfAbsent(end.taskInfo.executorId, _ => new AtomicLong()).incrementAndGet()
    ()
  }

  /** Tasks seen ending on `executor` so far. */
  def on(executor: String): Long = Option(ended.get(executor)).fold(0L)(_.get())

  /** The executors that ran a task so far. */
  def executors: Set[String] = {
    val ids = Set.newBuilder[String]
    ended.forEach((id, _) => ids += id)
    ids.result()
  }

  /**
   * The reports of `executors` once each has reported every task seen ending on it (the listener
   * bus drained first). An executor that ran no task has none; a lost one never catches up, so
   * name only live ones. Fails after `seconds`, with `context` in the message.
   */
  def awaitReports(sc: SparkContext, executors: Set[String], seconds: Int = 120)(
      context: => String
  ): Map[String, ExecutorCacheReport] = {
    sc.listenerBus.waitUntilEmpty()
    def reported = QuiverMetrics.executorBroadcastCaches.filter { case (id, _) =>
      executors.contains(id)
    }
    def complete: Boolean = {
      val now = reported
      executors.forall(id => on(id) == 0 || now.get(id).exists(_.tasksEnded >= on(id)))
    }
    Eventually.await(seconds)(
      s"reports of every task that ended on ${executors.mkString(", ")}: " +
        s"seen $ended, reported $reported\n$context"
    )(complete)
    reported
  }
}
