package org.apache.spark.sql.quiver.shim

import org.apache.spark.TaskContext
import org.apache.spark.sql.quiver.SparkTaskScope

/**
 * Spark 4.0 and 4.1 cannot tell a task that it was killed, so a Quiver waiter checks for it
 * periodically. Built into the artifact of these lines only (see the module's pom).
 */
private[quiver] object TaskKills {

  val sparkLines: Seq[String] = Seq("4.0", "4.1")

  def taskScope(context: TaskContext): SparkTaskScope = new SparkTaskScope(context)
}
