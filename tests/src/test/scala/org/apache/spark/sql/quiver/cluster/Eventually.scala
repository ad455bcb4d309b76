package org.apache.spark.sql.quiver.cluster

import java.util.concurrent.TimeUnit

/** Waiting for what other JVMs do: the cluster's daemons, its executors, their reports. */
private[cluster] object Eventually {

  /**
   * Checks `condition` every 100 ms until it holds; after `seconds`, fails with "not seen within
   * N s: " and `what` (read then, so that it can tell the state at the end). A condition may
   * throw to give up sooner.
   */
  def await(seconds: Int)(what: => String)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds.toLong)
    while (!condition) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(s"not seen within $seconds s: $what")
      }
      Thread.sleep(100)
    }
  }
}
