package dev.quiver.spark

import dev.quiver.annotation.Public
import dev.quiver.broadcast.{CacheSnapshot, DecodedBroadcastCache}
import org.apache.spark.sql.quiver.QuiverRuntime

/**
 * What Quiver did and holds in this JVM (an executor, or the driver in local mode). Read it where
 * it is kept: on an executor, from code running in a task.
 */
@Public
object QuiverMetrics {

  /** The decoded-broadcast cache's counters since the JVM started: decodes, shared reads, waits. */
  def broadcastCache: DecodedBroadcastCache.CacheCounters = QuiverRuntime.broadcastCache.counters()

  /** The decoded-broadcast cache's entries now, with their holders and bytes. */
  def broadcastCacheEntries: CacheSnapshot = QuiverRuntime.broadcastCache.snapshot()

  /** Arrow memory Quiver holds in this JVM now, in bytes: decoded broadcasts and read buffers. */
  def allocatedBytes: Long = QuiverRuntime.allocator.getAllocatedMemory
}
