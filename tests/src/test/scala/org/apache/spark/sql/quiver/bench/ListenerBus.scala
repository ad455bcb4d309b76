package org.apache.spark.sql.quiver.bench

import org.apache.spark.SparkContext

/** Access to Spark's listener bus, which is Spark-private. */
object ListenerBus {

  /** Waits until every event posted so far has reached the listeners. */
  def drain(sc: SparkContext): Unit = sc.listenerBus.waitUntilEmpty()
}
