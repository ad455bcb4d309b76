package org.apache.spark.sql.quiver.join

import dev.quiver.broadcast.BroadcastReader
import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * What the reads of a Quiver broadcast by one plan node's tasks cost, as SQL metrics of that node:
 * the figures `ArrowBroadcastRDD`'s accumulators hold for a plain read (see
 * `dev.quiver.spark.broadcast.BroadcastReadMetrics`). Each read adds to exactly one of the four
 * counts.
 */
final private[quiver] case class BroadcastReadSqlMetrics(
    decodeTime: SQLMetric,
    waitTime: SQLMetric,
    decoded: SQLMetric,
    decodedPrivately: SQLMetric,
    shared: SQLMetric,
    retained: SQLMetric
) {

  /** By the keys of the plan node's `metrics`. */
  def asMap: Map[String, SQLMetric] = Map(
    "broadcastDecodeTime" -> decodeTime,
    "broadcastWaitTime" -> waitTime,
    "broadcastReadsDecoded" -> decoded,
    "broadcastReadsDecodedPrivately" -> decodedPrivately,
    "broadcastReadsShared" -> shared,
    "broadcastReadsRetained" -> retained
  )

  /** Adds one read's figures (its waits for derived values included, so far). */
  def add(reader: BroadcastReader): Unit =
    BroadcastReadFigures.add(
      reader,
      Seq(decodeTime, waitTime, decoded, decodedPrivately, shared, retained)
    )(_.add(_))
}

private[quiver] object BroadcastReadSqlMetrics {

  def apply(sc: SparkContext): BroadcastReadSqlMetrics = BroadcastReadSqlMetrics(
    SQLMetrics.createNanoTimingMetric(sc, "time to decode the broadcast"),
    SQLMetrics.createNanoTimingMetric(sc, "time waiting for another task's decode or build"),
    SQLMetrics.createMetric(sc, "broadcast reads decoded"),
    SQLMetrics.createMetric(sc, "broadcast reads decoded privately"),
    SQLMetrics.createMetric(sc, "broadcast reads of another task's decode"),
    SQLMetrics.createMetric(sc, "broadcast reads of a retained decode")
  )

  /** The metrics of a node's map, made by [[apply]] into it. */
  def of(metrics: Map[String, SQLMetric]): BroadcastReadSqlMetrics = BroadcastReadSqlMetrics(
    metrics("broadcastDecodeTime"),
    metrics("broadcastWaitTime"),
    metrics("broadcastReadsDecoded"),
    metrics("broadcastReadsDecodedPrivately"),
    metrics("broadcastReadsShared"),
    metrics("broadcastReadsRetained")
  )
}
