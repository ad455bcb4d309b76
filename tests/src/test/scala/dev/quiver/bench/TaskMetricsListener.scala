package dev.quiver.bench

import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/** Collects run time and CPU time of every finished task, for the benchmark's report. */
class TaskMetricsListener extends SparkListener {

  private val tasks = new ConcurrentLinkedQueue[TaskTimes]()

  override def onTaskEnd(taskEnd: SparkListenerTaskEnd): Unit = {
    val metrics = taskEnd.taskMetrics
    if (metrics != null) {
      tasks.add(
        TaskTimes(taskEnd.stageId, metrics.executorRunTime, metrics.executorCpuTime / 1000000L)
      )
    }
  }

  def clear(): Unit = tasks.clear()

  def finished: Seq[TaskTimes] = tasks.toArray(new Array[TaskTimes](0)).toSeq
}

/** One task's run time and CPU time, in milliseconds. */
case class TaskTimes(stageId: Int, runMillis: Long, cpuMillis: Long)
