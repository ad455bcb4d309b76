package org.apache.spark.sql.quiver.shim

import java.io.Closeable

import dev.quiver.spark.SparkShim
import org.apache.spark.TaskContext

/** Spark 3.4 and 3.5: no uninterruptible resource creation, so opening is a plain call. */
class Spark3Shim extends SparkShim {

  override val sparkLines: Seq[String] = Seq("3.4", "3.5")

  override def openUninterruptibly[T <: Closeable](context: TaskContext)(open: () => T): T = open()
}
