package org.apache.spark.sql.quiver.cluster

import java.nio.file.{Files, Paths}
import java.util.concurrent.TimeUnit

import org.apache.spark.{BarrierTaskContext, SparkEnv, TaskContext}
import org.apache.spark.sql.vectorized.ColumnarBatch

/** What the cluster suites' tasks do, on the executors (kept apart from the suites: serializable). */
object ClusterTasks {

  /** One task's read of a broadcast: where it ran, rows, and the sum of column 1 (a long). */
  final case class Read(executorId: String, pid: Long, rows: Long, sum: Long)

  def executorId: String = SparkEnv.get.executorId

  def pid: Long = ProcessHandle.current().pid()

  /**
   * Reads every batch; after the first one (the task then holds the decoded broadcast), runs
   * `holding`, so that what it waits for happens while every such task holds its entry.
   */
  def read(batches: Iterator[ColumnarBatch], holding: () => Unit): Read = {
    var rows = 0L
    var sum = 0L
    var first = true
    while (batches.hasNext) {
      val batch = batches.next()
      rows += batch.numRows()
      val column = batch.column(1)
      var i = 0
      while (i < batch.numRows()) {
        sum += column.getLong(i)
        i += 1
      }
      if (first) {
        first = false
        holding()
      }
    }
    Read(executorId, pid, rows, sum)
  }

  /** In a barrier stage: every task of the stage holds its read at once. */
  def readTogether(batches: Iterator[ColumnarBatch]): Read =
    read(batches, () => BarrierTaskContext.get().barrier())

  /**
   * Holding its read, the task writes where it runs into `folder` and waits until `folder/go`
   * exists (at most two minutes): the suite kills an executor while its tasks wait.
   */
  def readThenWait(batches: Iterator[ColumnarBatch], folder: String): Read =
    read(
      batches,
      () => {
        val dir = Paths.get(folder)
        val attempt = TaskContext.get().taskAttemptId()
        Files.write(dir.resolve(s"task-$attempt"), s"$executorId $pid".getBytes("UTF-8"))
        val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2)
        while (!Files.exists(dir.resolve("go")) && System.nanoTime() < deadline) Thread.sleep(50)
      }
    )
}
