package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal
import dev.quiver.broadcast.DecodedBroadcastCache
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.spark.SparkEnv

/** Quiver's state in one JVM (an executor, or the driver in local mode). */
@Internal
object QuiverRuntime {

  /** Parent of every buffer Quiver allocates in this JVM; leaks show up as its allocated bytes. */
  lazy val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)

  /** The executor's one decoded-broadcast cache, sized by the settings the executor started with. */
  lazy val broadcastCache: DecodedBroadcastCache =
    new DecodedBroadcastCache(
      allocator.newChildAllocator("quiver-broadcast-cache", 0, Long.MaxValue),
      executorSetting(QuiverConf.MaxDecodedBroadcastBytes)
    )

  /**
   * An executor-wide setting: read once, from the Spark configuration the executor was started
   * with (a static SQL setting, so a session cannot set it to no effect).
   */
  private def executorSetting(entry: org.apache.spark.internal.config.ConfigEntry[Long]): Long =
    Option(SparkEnv.get).map(_.conf.get(entry)).getOrElse(entry.defaultValue.get)
}
