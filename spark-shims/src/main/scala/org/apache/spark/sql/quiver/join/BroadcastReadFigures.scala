package org.apache.spark.sql.quiver.join

import dev.quiver.broadcast.BroadcastReader
import dev.quiver.broadcast.BroadcastReader.Served

/**
 * How one task's open of a broadcast adds to the figures of the reads, in whichever of Spark's
 * accumulators hold them: `dev.quiver.spark.broadcast.BroadcastReadMetrics` (a plain read) and
 * [[BroadcastReadSqlMetrics]] (a plan node's SQL metrics). Public only for the former, which lives
 * outside this package.
 */
object BroadcastReadFigures {

  /**
   * Adds the open's times, and one to the count of how it was served, to `figures`: the decode
   * time, the wait time, and the opens decoded, decoded privately, shared and retained, in that
   * order. Through `addTo`, as Spark's `LongAccumulator` and `SQLMetric` share no type that adds a
   * `Long`.
   */
  def add[A](reader: BroadcastReader, figures: Seq[A])(addTo: (A, Long) => Unit): Unit =
    figures match {
      case Seq(decodeTime, waitTime, decoded, decodedPrivately, shared, retained) =>
        addTo(decodeTime, reader.decodeNanos())
        addTo(waitTime, reader.waitNanos())
        addTo(
          reader.served() match {
            case Served.DECODED => decoded
            case Served.PRIVATE => decodedPrivately
            case Served.SHARED => shared
            case Served.RETAINED => retained
          },
          1L
        )
      case _ => throw new IllegalArgumentException(s"six figures expected, got ${figures.size}")
    }
}
