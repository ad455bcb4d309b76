package dev.quiver.spark

import dev.quiver.annotation.Public

/**
 * The keys of the settings a user sets, as constants for `spark.conf.set` or `SparkConf.set`.
 * `docs/tuning.md` describes each, with its default and scope. Session settings may be set per
 * session; executor-wide ones only in the configuration the application starts with (a session
 * that sets one fails).
 */
@Public
object QuiverSettings {

  /** Session: whether overlapping tasks of one executor share one decoded broadcast. */
  final val ShareDecodedBroadcasts = "spark.quiver.broadcast.shareDecoded.enabled"

  /** Executor-wide: the most memory one decoded broadcast may take on an executor. */
  final val MaxDecodedBroadcastBytes = "spark.quiver.broadcast.maxDecodedBytes"

  /** Executor-wide: whether decoded broadcasts stay after their last task, in storage memory. */
  final val RetainDecodedBroadcasts = "spark.quiver.broadcast.retain.enabled"

  /** Executor-wide: the most memory all retained decoded broadcasts may take together. */
  final val RetainMaxBytes = "spark.quiver.broadcast.retain.maxBytes"

  /** Session: the codec of the shuffle exchange's blocks (lz4, zstd, snappy, none). */
  final val ShuffleCodec = "spark.quiver.shuffle.codec"

  /** Session: the zstd level of the shuffle exchange's blocks. */
  final val ShuffleZstdLevel = "spark.quiver.shuffle.zstd.level"

  /** Session: the rows a reduce task coalesces small decoded batches up to. */
  final val ShuffleBatchSize = "spark.quiver.shuffle.batchSize"

  /** Session: the largest shuffle block the exchange writes or reads. */
  final val ShuffleMaxBlockBytes = "spark.quiver.shuffle.maxBlockBytes"

  /** The plugin to list in `spark.plugins`: registers the settings when Spark starts. */
  final val Plugin = "dev.quiver.spark.QuiverPlugin"
}
