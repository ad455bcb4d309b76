package dev.quiver.bench

import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

/** Collects the run time and CPU time of every finished task, for the benchmark's report. */
class TaskMetricsListener extends SparkListener {

  private val tasks = new ConcurrentLinkedQueue[TaskTimes]()

  override def onTaskEnd(taskEnd: SparkListenerTaskEnd): Unit = {
    val metrics = taskEnd.taskMetrics
    if (metrics != null) {
      tasks.add(
        TaskTimes(taskEnd.stageId, metrics.executorRunTime, metrics.executorCpuTime)
      )
    }
  }

  def clear(): Unit = tasks.clear()

  def finished: Seq[TaskTimes] = tasks.toArray(new Array[TaskTimes](0)).toSeq

  /**
   * The tasks of the probe stage: the last stage that ran exactly `probeTasks` tasks (the scan
   * of the probe files, with the join and the partial aggregation in the same stage).
   */
  def probeStage(probeTasks: Int): Seq[TaskTimes] = {
    val byStage = finished.groupBy(_.stageId).filter(_._2.size == probeTasks)
    if (byStage.isEmpty) Seq.empty else byStage(byStage.keys.max)
  }
}

/** One task's run time (milliseconds, as Spark keeps it) and CPU time (nanoseconds). */
final case class TaskTimes(stageId: Int, runMillis: Long, cpuNanos: Long) {
  def cpuMillis: Long = cpuNanos / 1000000L
}
