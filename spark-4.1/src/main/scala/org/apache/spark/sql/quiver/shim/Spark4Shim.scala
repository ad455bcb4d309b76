package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import dev.quiver.spark.SparkShim
import org.apache.spark.TaskContext

/**
 * Spark 4.0 and 4.1. In a package under `org.apache.spark` because
 * `TaskContext.createResourceUninterruptibly` is Spark-private.
 */
class Spark4Shim extends SparkShim {

  override val sparkLines: Seq[String] = Seq("4.0", "4.1")

  override def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T =
    if (context == null) open() else context.createResourceUninterruptibly(open())
}
