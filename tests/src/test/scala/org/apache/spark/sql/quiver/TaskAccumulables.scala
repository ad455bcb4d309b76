package org.apache.spark.sql.quiver

import java.util.concurrent.ConcurrentLinkedQueue

import scala.collection.mutable

import org.apache.spark.{SparkContext, Success}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/**
 * What each task that succeeded added to named accumulators, as Spark's listeners get it
 * (`SparkListenerTaskEnd.taskInfo.accumulables`): the per-task figures Spark's UI shows.
 */
final class TaskAccumulables private (ids: Set[Long]) extends SparkListener {

  private val tasks = new ConcurrentLinkedQueue[Map[Long, Long]]()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
    if (end.reason == Success) {
      val updates = mutable.Map[Long, Long]()
      end.taskInfo.accumulables.foreach { info =>
        if (ids.contains(info.id)) info.update.foreach {
          case value: java.lang.Long => updates(info.id) = value.longValue
          case other => throw new IllegalStateException(s"accumulator ${info.name}: $other")
        }
      }
      if (updates.nonEmpty) tasks.add(updates.toMap)
    }

  /**
   * The tasks that updated any of the accumulators, each as accumulator id -> its update. Spark
   * leaves out an update that is zero, so read them with `getOrElse(id, 0L)`.
   */
  def perTask: Seq[Map[Long, Long]] = tasks.toArray(new Array[Map[Long, Long]](0)).toSeq
}

object TaskAccumulables {

  /** Runs `body` while listening for updates of the accumulators `ids`, every event delivered. */
  def during[T](sc: SparkContext, ids: Iterable[Long])(body: => T): (T, TaskAccumulables) = {
    val listener = new TaskAccumulables(ids.toSet)
    sc.addSparkListener(listener)
    try {
      val result = body
      sc.listenerBus.waitUntilEmpty()
      (result, listener)
    } finally sc.removeSparkListener(listener)
  }
}
