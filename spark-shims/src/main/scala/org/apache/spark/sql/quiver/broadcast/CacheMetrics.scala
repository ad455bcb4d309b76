package org.apache.spark.sql.quiver.broadcast

import com.codahale.metrics.{Gauge, MetricRegistry}
import dev.quiver.annotation.Internal
import dev.quiver.broadcast.CacheCounters
import org.apache.spark.sql.quiver.QuiverRuntime

/**
 * The decoded-broadcast cache's figures as gauges of Spark's metrics system: registered by
 * Quiver's plugin on the driver and on every executor, under the plugin's namespace
 * (`plugin.dev.quiver.spark.QuiverPlugin.`), and read when a sink reports.
 */
@Internal
object CacheMetrics {

  /** Every metric's name, with what it reads. */
  val Gauges: Seq[(String, CacheCounters => Long)] = Seq(
    "broadcast.decodes" -> (_.decodes()),
    "broadcast.privateDecodes" -> (_.privateDecodes()),
    "broadcast.failedDecodes" -> (_.failedDecodes()),
    "broadcast.sharedReads" -> (_.sharedReads()),
    "broadcast.retainedReads" -> (_.retainedReads()),
    "broadcast.waits" -> (_.waits()),
    "broadcast.waitMillis" -> (_.waitNanos() / 1000000L),
    "broadcast.entriesHeld" -> (_.entriesHeld()),
    "broadcast.bytesHeld" -> (_.bytesHeld()),
    "broadcast.entriesRetained" -> (_.entriesRetained()),
    "broadcast.bytesRetained" -> (_.bytesRetained()),
    "broadcast.evictions.budget" -> (_.budgetEvictions()),
    "broadcast.evictions.pressure" -> (_.pressureEvictions()),
    "broadcast.evictions.dropped" -> (_.droppedEvictions()),
    "broadcast.derivedBuilds" -> (_.derivedBuilds()),
    "broadcast.derivedReuses" -> (_.derivedReuses()),
    "broadcast.failedDerivations" -> (_.failedDerivations()),
    "broadcast.doubleReleases" -> (_.doubleReleases())
  )

  private val AllocatedBytes = "allocatedBytes"

  def register(registry: MetricRegistry): Unit = {
    Gauges.foreach { case (name, read) =>
      registry.register(name, gauge(read(QuiverRuntime.broadcastCache.counters())))
    }
    registry.register(AllocatedBytes, gauge(QuiverRuntime.allocator.getAllocatedMemory))
  }

  /** Every gauge's value now, read from one snapshot of the counters. */
  def figures(): Map[String, Long] = {
    val counters = QuiverRuntime.broadcastCache.counters()
    Gauges.map { case (name, read) => name -> read(counters) }.toMap +
      (AllocatedBytes -> QuiverRuntime.allocator.getAllocatedMemory)
  }

  private def gauge(value: => Long): Gauge[java.lang.Long] = new Gauge[java.lang.Long] {
    override def getValue: java.lang.Long = value
  }
}
