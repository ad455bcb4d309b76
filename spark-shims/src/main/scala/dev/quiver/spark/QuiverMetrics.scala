package dev.quiver.spark

import dev.quiver.annotation.Public
import dev.quiver.broadcast.{CacheCounters, CacheSnapshot}
import org.apache.spark.sql.quiver.QuiverRuntime
import org.apache.spark.sql.quiver.broadcast.ExecutorCacheReports

/**
 * What Quiver did and holds in this JVM (an executor, or the driver in local mode). Read it where
 * it is kept: on an executor, from code running in a task.
 */
@Public
object QuiverMetrics {

  /** The decoded-broadcast cache's counters since the JVM started: decodes, shared reads, waits. */
  def broadcastCache: CacheCounters = QuiverRuntime.broadcastCache.counters()

  /** The decoded-broadcast cache's entries now, with their holders and bytes. */
  def broadcastCacheEntries: CacheSnapshot = QuiverRuntime.broadcastCache.snapshot()

  /** Arrow memory Quiver holds in this JVM now, in bytes: decoded broadcasts and read buffers. */
  def allocatedBytes: Long = QuiverRuntime.allocator.getAllocatedMemory

  /**
   * On the driver of an application running Quiver's plugin: every live executor's cache figures
   * as it last reported them, by executor id. An executor Spark removed (lost, killed) has none
   * from the moment the driver's listeners hear of it: its JVM, and what its cache held, are gone.
   * An executor reports after each task that ends there, beside the task's status update,
   * so a task's figures reach the driver soon after the task ends, not always before its job's
   * action returns: to see a whole job, wait until the reports' `tasksEnded` add up to the tasks
   * the executors ran. Empty without the plugin, and on an executor.
   */
  def executorBroadcastCaches: Map[String, ExecutorCacheReport] =
    ExecutorCacheReports.current.map(_.byExecutor).getOrElse(Map.empty)

  /** [[executorBroadcastCaches]] for callers in Java: unmodifiable, sorted by executor id. */
  def executorBroadcastCachesAsJava: java.util.Map[String, ExecutorCacheReport] = {
    val sorted = new java.util.TreeMap[String, ExecutorCacheReport]()
    executorBroadcastCaches.foreach { case (id, report) => sorted.put(id, report) }
    java.util.Collections.unmodifiableMap(sorted)
  }
}
