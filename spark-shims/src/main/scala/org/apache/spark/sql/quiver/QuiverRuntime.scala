package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal
import dev.quiver.broadcast.{DecodedBroadcastCache, Retention}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.spark.SparkEnv
import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.sql.quiver.broadcast.SparkStorageMemory
import org.apache.spark.storage.BroadcastBlockId

/** Quiver's state in one JVM (an executor, or the driver in local mode). */
@Internal
object QuiverRuntime {

  /** Parent of every buffer Quiver allocates in this JVM; leaks show up as its allocated bytes. */
  lazy val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)

  private var bound: Option[(SparkEnv, DecodedBroadcastCache)] = None

  /**
   * The executor's one decoded-broadcast cache, made by the settings the executor started with. It
   * belongs to the running `SparkEnv`: a JVM that starts another SparkContext (tests, notebooks in
   * local mode) gets a new cache with that context's settings and memory manager, and the old one
   * is closed (its idle entries freed at once, held ones by their last task). Its counters start
   * again at zero.
   */
  def broadcastCache: DecodedBroadcastCache = synchronized {
    val env = SparkEnv.get
    bound match {
      // Between contexts (no SparkEnv), the last one's cache, so that what it did can be read.
      case Some((boundEnv, cache)) if (boundEnv eq env) || env == null => cache
      case previous =>
        previous.foreach(_._2.close())
        val cache = new DecodedBroadcastCache(
          allocator.newChildAllocator("quiver-broadcast-cache", 0, Long.MaxValue),
          executorSetting(QuiverConf.MaxDecodedBroadcastBytes),
          retention
        )
        bound = Some((env, cache))
        cache
    }
  }

  private var boundCodec: Option[(SparkEnv, SparkCodec)] = None

  /**
   * The running `SparkEnv`'s block codec (`spark.io.compression.codec`), made once rather than by
   * reflection in every task that reads or writes a broadcast. One instance serves every task
   * thread, as Spark's own `SerializerManager` shares its codec: each of Spark's codecs (lz4, lzf,
   * snappy, zstd) keeps only its settings and thread-safe factories (lz4-java's factories, zstd's
   * synchronized buffer pool) and makes a new compressor or decompressor per stream; Quiver's lz4
   * and snappy readers hold no state at all.
   */
  def broadcastCodec: SparkCodec = synchronized {
    val env = SparkEnv.get
    boundCodec match {
      case Some((boundEnv, codec)) if boundEnv eq env => codec
      case _ =>
        val codec = SparkCodec(env.conf)
        boundCodec = Some((env, codec))
        codec
    }
  }

  /** Closes the cache (at executor shutdown): idle entries go now, held ones with their tasks. */
  def closeBroadcastCache(): Unit = synchronized(bound.foreach(_._2.close()))

  /**
   * Retention as the executor's settings ask for it, in Spark's storage memory. A broadcast lives
   * while this executor's block manager holds its value: Spark drops that block when the broadcast
   * is destroyed or unpersisted on the executor, or when its own memory pressure evicts it.
   */
  private def retention: Retention = Option(SparkEnv.get) match {
    case Some(env) if env.conf.get(QuiverConf.RetainDecodedBroadcasts) =>
      Retention.of(
        env.conf.get(QuiverConf.RetainMaxBytes),
        new SparkStorageMemory(env.memoryManager, SparkStorageMemory.memoryMode(env.conf)),
        id => env.blockManager.getStatus(BroadcastBlockId(id)).isDefined
      )
    case _ => Retention.disabled()
  }

  /**
   * An executor-wide setting: read once, from the Spark configuration the executor was started
   * with (a static SQL setting, so a session cannot set it to no effect).
   */
  private def executorSetting[T](entry: ConfigEntry[T]): T =
    Option(SparkEnv.get).map(_.conf.get(entry)).getOrElse(entry.defaultValue.get)
}
