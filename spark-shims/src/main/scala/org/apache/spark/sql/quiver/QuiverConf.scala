package org.apache.spark.sql.quiver

import java.util.Locale

import dev.quiver.shuffle.ShuffleBlockFormat
import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.sql.internal.SQLConf

/**
 * Quiver's settings, registered with Spark's SQL configuration so that they appear, with their
 * documentation, in `SET -v` and can be set per session. `docs/tuning.md` describes each.
 */
object QuiverConf {

  val ShareDecodedBroadcasts: ConfigEntry[Boolean] =
    SQLConf
      .buildConf("spark.quiver.broadcast.shareDecoded.enabled")
      .doc(
        "When true, the tasks of one executor that read the same Arrow broadcast at the same " +
          "time share one decoded copy of it; the copy is freed when the last of them completes. " +
          "When false, every task decodes the broadcast for itself."
      )
      .version("0.1.0")
      .booleanConf
      .createWithDefault(true)

  val MaxDecodedBroadcastBytes: ConfigEntry[Long] =
    SQLConf
      .buildConf("spark.quiver.broadcast.maxDecodedBytes")
      .doc(
        "The most memory one decoded broadcast may take on an executor. A broadcast whose " +
          "streams claim more is rejected as corrupt before the memory is allocated."
      )
      .version("0.1.0")
      .longConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(8L << 30)

  val ShuffleCodec: ConfigEntry[String] =
    SQLConf
      .buildConf("spark.quiver.shuffle.codec")
      .doc(
        "The codec of the blocks Quiver's shuffle exchange writes: lz4, zstd, snappy or none. " +
          "Applies only when spark.shuffle.compress is false: when Spark compresses shuffle " +
          "output (its default), Quiver writes uncompressed blocks, so that bytes are " +
          "compressed once."
      )
      .version("0.1.0")
      .stringConf
      .transform(_.toLowerCase(Locale.ROOT))
      .checkValues(Set("lz4", "zstd", "snappy", "none"))
      .createWithDefault("lz4")

  val ShuffleZstdLevel: ConfigEntry[Int] =
    SQLConf
      .buildConf("spark.quiver.shuffle.zstd.level")
      .doc("The zstd level of Quiver's shuffle blocks when spark.quiver.shuffle.codec is zstd.")
      .version("0.1.0")
      .intConf
      .createWithDefault(1)

  val ShuffleBatchSize: ConfigEntry[Int] =
    SQLConf
      .buildConf("spark.quiver.shuffle.batchSize")
      .doc(
        "The number of rows a reduce task of Quiver's shuffle exchange coalesces small decoded " +
          "batches up to. Batches of at least this many rows are passed on as they are; 1 " +
          "turns coalescing off."
      )
      .version("0.1.0")
      .intConf
      .checkValue(_ > 0, "must be positive")
      .createWithDefault(8192)

  val ShuffleMaxBlockBytes: ConfigEntry[Long] =
    SQLConf
      .buildConf("spark.quiver.shuffle.maxBlockBytes")
      .doc(
        "The largest shuffle block Quiver's exchange writes or reads, in bytes after its " +
          "length field. A map task whose block would be larger fails and says so; a reduce " +
          "task reading a block that claims more fails as corrupt before allocating for it."
      )
      .version("0.1.0")
      .longConf
      .checkValue(
        v =>
          v >= ShuffleBlockFormat.HEADER_BYTES && v <= ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH,
        s"must be between ${ShuffleBlockFormat.HEADER_BYTES} and " +
          s"${ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH}"
      )
      .createWithDefault(ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH)

  /** All of Quiver's entries; touching this registers them with Spark. */
  def entries: Seq[ConfigEntry[_]] = Seq(
    ShareDecodedBroadcasts,
    MaxDecodedBroadcastBytes,
    ShuffleCodec,
    ShuffleZstdLevel,
    ShuffleBatchSize,
    ShuffleMaxBlockBytes
  )

  def shareDecodedBroadcasts(conf: SQLConf): Boolean = conf.getConf(ShareDecodedBroadcasts)
}
