package dev.quiver.spark

import dev.quiver.broadcast.{BroadcastDecoder, DecodedBroadcastCache}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.spark.SparkEnv
import org.apache.spark.sql.quiver.QuiverConf

/** Quiver's state in one JVM (an executor, or the driver in local mode). */
object QuiverRuntime {

  /** Parent of every buffer Quiver allocates in this JVM; leaks show up as its allocated bytes. */
  lazy val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)

  /** The executor's one decoded-broadcast cache. */
  lazy val broadcastCache: DecodedBroadcastCache =
    new DecodedBroadcastCache(
      allocator.newChildAllocator("quiver-broadcast-cache", 0, Long.MaxValue),
      BroadcastDecoder.ARROW_IPC,
      executorSetting(
        QuiverConf.MaxDecodedBroadcastBytes.key,
        QuiverConf.MaxDecodedBroadcastBytes.defaultValue.get
      )
    )

  /** An executor-wide setting: from the Spark configuration the executor was started with. */
  private def executorSetting(key: String, default: Long): Long =
    Option(SparkEnv.get).map(_.conf.getLong(key, default)).getOrElse(default)
}
