package dev.quiver.spark.shuffle

import dev.quiver.annotation.Public
import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * What the reduce side of one exchange read, summed over its tasks: Spark SQL metrics, so that an
 * engine can show them on its own plan node (`asMap`, or `asJavaMap` from Java). Each task's values also reach listeners
 * (`SparkListenerTaskEnd.taskInfo.accumulables`); Spark's stage page leaves SQL metrics out of its
 * task table, so the UI shows them only on a plan node that carries them. Spark's own shuffle read
 * metrics (bytes and blocks fetched, fetch wait time, records read) are filled as for any shuffle.
 *
 * @param blocksRead Quiver shuffle blocks read
 * @param blockBytesRead bytes of those blocks, headers included, as Quiver's readers got them
 *   (after Spark's shuffle decompression, if any)
 * @param readTime time spent reading and decoding blocks (decoding path) or reading them (raw-block
 *   path), not counting Spark's wait for fetches
 * @param rowsRead rows decoded (decoding path only)
 * @param batchesOut batches handed to the consumer after coalescing (decoding path only)
 */
@Public
final class QuiverShuffleMetrics private (
    val blocksRead: SQLMetric,
    val blockBytesRead: SQLMetric,
    val readTime: SQLMetric,
    val rowsRead: SQLMetric,
    val batchesOut: SQLMetric
) extends Serializable {

  /** The metrics by the keys an engine would give them in its plan node's `metrics`. */
  def asMap: Map[String, SQLMetric] = Map(
    "quiverBlocksRead" -> blocksRead,
    "quiverBlockBytesRead" -> blockBytesRead,
    "quiverReadTime" -> readTime,
    "quiverRowsRead" -> rowsRead,
    "quiverBatchesOut" -> batchesOut
  )

  /** [[asMap]] for callers in Java: unmodifiable, in the order of the constructor. */
  def asJavaMap: java.util.Map[String, SQLMetric] = {
    val byKey = new java.util.LinkedHashMap[String, SQLMetric]()
    byKey.put("quiverBlocksRead", blocksRead)
    byKey.put("quiverBlockBytesRead", blockBytesRead)
    byKey.put("quiverReadTime", readTime)
    byKey.put("quiverRowsRead", rowsRead)
    byKey.put("quiverBatchesOut", batchesOut)
    java.util.Collections.unmodifiableMap(byKey)
  }
}

object QuiverShuffleMetrics {

  /** New metrics, registered with `sc` (on the driver). */
  def apply(sc: SparkContext): QuiverShuffleMetrics = new QuiverShuffleMetrics(
    SQLMetrics.createMetric(sc, "Quiver shuffle blocks read"),
    SQLMetrics.createSizeMetric(sc, "Quiver shuffle block bytes read"),
    SQLMetrics.createNanoTimingMetric(sc, "Quiver shuffle read and decode time"),
    SQLMetrics.createMetric(sc, "Quiver shuffle rows read"),
    SQLMetrics.createMetric(sc, "Quiver shuffle batches out")
  )
}
