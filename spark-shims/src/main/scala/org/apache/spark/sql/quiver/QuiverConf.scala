package org.apache.spark.sql.quiver

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

  /** All of Quiver's entries; touching this registers them with Spark. */
  def entries: Seq[ConfigEntry[_]] = Seq(ShareDecodedBroadcasts, MaxDecodedBroadcastBytes)

  def shareDecodedBroadcasts(conf: SQLConf): Boolean = conf.getConf(ShareDecodedBroadcasts)
}
