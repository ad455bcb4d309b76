package dev.quiver.spark.broadcast

import dev.quiver.annotation.Public
import org.apache.spark.SparkContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.quiver.{BroadcastBuilder, JavaLists, QuiverConf}
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
@Public
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

  /**
   * Encodes `df` as Arrow on the executors, coalesces on the driver, and broadcasts it. Runs a job
   * to collect `df`. Fails with Spark's own error when `df` has 512,000,000 rows or more, or its
   * streams take Spark's broadcast byte limit or more (`spark.sql.maxBroadcastTableSize` on Spark
   * 4.1 and later, default 8 GiB; a fixed 8 GiB before): the limits Spark puts on its broadcasts.
   */
  def of(df: DataFrame): ArrowBroadcast = {
    QuiverConf.register()
    BroadcastBuilder.build(df)
  }

  /**
   * Broadcasts compressed Arrow IPC streams an engine already holds (one per source partition,
   * say), all of `schema` and compressed with Spark's configured codec
   * (`spark.io.compression.codec`). They are coalesced into one stream unless they carry
   * dictionaries, and Spark's broadcast limits apply as for [[of]].
   */
  def ofStreams(
      spark: SparkSession,
      schema: StructType,
      streams: Seq[Array[Byte]]
  ): ArrowBroadcast = {
    QuiverConf.register()
    BroadcastBuilder.fromStreams(spark.sparkContext, schema, streams)
  }

  /** [[ofStreams]] for callers in Java. */
  def ofStreams(
      spark: SparkSession,
      schema: StructType,
      streams: java.util.List[Array[Byte]]
  ): ArrowBroadcast = ofStreams(spark, schema, JavaLists.toSeq(streams))
}
