package org.apache.spark.sql.quiver

import dev.quiver.task.TaskScope
import org.apache.spark.TaskContext
import org.apache.spark.util.TaskCompletionListener

/**
 * A [[TaskScope]] over Spark's `TaskContext`. In a package under `org.apache.spark` because
 * `killTaskIfInterrupted` is Spark-private.
 */
private[quiver] class SparkTaskScope(val context: TaskContext) extends TaskScope {

  override def attemptId(): Long = context.taskAttemptId()

  override def onCompletion(listener: Runnable): Unit = {
    context.addTaskCompletionListener(new TaskCompletionListener {
      override def onTaskCompletion(context: TaskContext): Unit = listener.run()
    })
    ()
  }

  override def isInterrupted(): Boolean = context.isInterrupted()

  /** Throws Spark's `TaskKilledException`, with the kill reason, if the task was killed. */
  override def throwIfKilled(): Unit = context.killTaskIfInterrupted()
}
