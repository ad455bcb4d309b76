package org.apache.spark.sql.quiver.shim

import org.apache.spark.TaskContext
import org.apache.spark.sql.quiver.SparkTaskScope
import org.apache.spark.util.TaskInterruptListener

/**
 * Spark 4.2 runs a task's interrupt listeners as soon as the task is marked killed (SPARK-56330),
 * so a Quiver waiter wakes at the kill instead of at its next check. Built into the 4.2 artifact
 * only (see the module's pom).
 */
private[quiver] object TaskKills {

  val sparkLines: Seq[String] = Seq("4.2")

  def taskScope(context: TaskContext): SparkTaskScope = new ListeningTaskScope(context)

  final private class ListeningTaskScope(context: TaskContext) extends SparkTaskScope(context) {

    override def onKill(listener: Runnable): Boolean = {
      context.addTaskInterruptListener(new TaskInterruptListener {
        override def onTaskInterrupted(context: TaskContext, reason: String): Unit = listener.run()
      })
      true
    }
  }
}
