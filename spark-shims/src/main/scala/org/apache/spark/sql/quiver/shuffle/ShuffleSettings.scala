package org.apache.spark.sql.quiver.shuffle

import dev.quiver.annotation.Internal
import dev.quiver.shuffle.BlockCodec
import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.internal.config
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.QuiverConf

/**
 * An exchange's settings, fixed on the driver when the exchange is made and shipped to its tasks.
 *
 * @param codecName the block codec the map side writes: lz4, zstd, snappy or none
 * @param zstdLevel the level when `codecName` is zstd
 * @param batchSize the row count reduce-side coalescing aims at
 * @param maxBlockBytes the largest block written or read (bytes after the length field)
 */
@Internal
final case class ShuffleSettings(
    codecName: String,
    zstdLevel: Int,
    batchSize: Int,
    maxBlockBytes: Long
) {

  require(batchSize > 0, s"batchSize must be positive, got $batchSize")

  /** The codec as common's [[BlockCodec]] (not serializable itself, hence the name above). */
  def blockCodec: BlockCodec = codecName match {
    case "lz4" => BlockCodec.LZ4
    case "zstd" => BlockCodec.zstd(zstdLevel)
    case "snappy" => BlockCodec.SNAPPY
    case "none" => BlockCodec.NONE
    case other => throw new IllegalArgumentException(s"unknown shuffle block codec '$other'")
  }
}

@Internal
object ShuffleSettings {

  /** The current session's settings, with the block codec chosen by [[blockCodecName]]. */
  def fromSession(sc: SparkContext): ShuffleSettings = {
    val conf = SQLConf.get
    val settings = ShuffleSettings(
      blockCodecName(conf.getConf(QuiverConf.ShuffleCodec), sparkCompressesShuffle(sc.conf)),
      conf.getConf(QuiverConf.ShuffleZstdLevel),
      conf.getConf(QuiverConf.ShuffleBatchSize),
      conf.getConf(QuiverConf.ShuffleMaxBlockBytes)
    )
    settings.blockCodec // fails here, on the driver, for a zstd level out of range
    settings
  }

  /**
   * The block codec the map side writes. Spark's shuffle writers pass every shuffle stream through
   * Spark's codec when `spark.shuffle.compress` is true (for every shuffle of the application; a
   * shuffle cannot opt out). Compressing the blocks too would spend CPU twice for nothing, so
   * Quiver's blocks are then written uncompressed: Spark's codec compresses them once. With
   * `spark.shuffle.compress=false` the configured codec compresses each block, the layout Comet's
   * native shuffle writes, and the raw-block path hands engines compressed bodies.
   */
  def blockCodecName(configured: String, sparkCompressesShuffle: Boolean): String =
    if (sparkCompressesShuffle) "none" else configured

  def sparkCompressesShuffle(conf: SparkConf): Boolean = conf.get(config.SHUFFLE_COMPRESS)
}
