package dev.quiver.spark.broadcast

import org.apache.spark.SparkContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.quiver.BroadcastBuilder
import org.apache.spark.sql.types.StructType

/**
 * A broadcast of compressed Arrow IPC streams and what building it did.
 *
 * @param value the Spark broadcast: one element per compressed IPC stream
 * @param schema the Spark schema of the rows in the streams
 * @param rows rows broadcast
 * @param bytes compressed bytes broadcast
 * @param inputBatches record batches the executors encoded, before coalescing
 * @param coalesced whether the driver merged them into one stream of one batch
 */
case class ArrowBroadcast(
    value: Broadcast[Array[Array[Byte]]],
    schema: StructType,
    rows: Long,
    bytes: Long,
    inputBatches: Int,
    coalesced: Boolean
) {

  /** The broadcast as `numPartitions` partitions, each reading all of it through the cache. */
  def rdd(numPartitions: Int): ArrowBroadcastRDD =
    new ArrowBroadcastRDD(SparkContext.getOrCreate(), value, numPartitions)
}

object ArrowBroadcast {

  /** Encodes `df` as Arrow on the executors, coalesces on the driver, and broadcasts it. */
  def of(df: DataFrame): ArrowBroadcast = BroadcastBuilder.build(df)
}
