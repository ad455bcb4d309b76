package dev.quiver.spark.broadcast

import dev.quiver.spark.{QuiverRuntime, SparkShims}
import org.apache.spark.{Partition, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.{QuiverConf, SparkCodec}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Reads a broadcast of compressed Arrow IPC streams as `ColumnarBatch`es, every partition the
 * whole broadcast: one partition per consumer task (zip it with the probe side). Tasks of one
 * executor that overlap share one decoded copy through [[QuiverRuntime.broadcastCache]], unless
 * `spark.quiver.broadcast.shareDecoded.enabled` was false when the RDD was made.
 */
class ArrowBroadcastRDD(
    sc: SparkContext,
    broadcast: Broadcast[Array[Array[Byte]]],
    numPartitions: Int,
    shareDecoded: Boolean
) extends RDD[ColumnarBatch](sc, Nil) {

  def this(sc: SparkContext, broadcast: Broadcast[Array[Array[Byte]]], numPartitions: Int) =
    this(sc, broadcast, numPartitions, QuiverConf.shareDecodedBroadcasts(SQLConf.get))

  override protected def getPartitions: Array[Partition] =
    Array.tabulate[Partition](numPartitions)(i => new ArrowBroadcastRDD.Slot(i))

  override def compute(split: Partition, context: TaskContext): Iterator[ColumnarBatch] =
    ArrowBroadcastRDD.read(broadcast, context, shareDecoded)
}

object ArrowBroadcastRDD {

  private class Slot(override val index: Int) extends Partition

  /**
   * Reads the whole broadcast in the current task: the one read path every consumer (joins, plain
   * JVM consumers) goes through.
   */
  def read(
      broadcast: Broadcast[Array[Array[Byte]]],
      context: TaskContext,
      shareDecoded: Boolean
  ): ColumnarBatches = {
    val shim = SparkShims.get
    val source = new ArrowBroadcastSource(broadcast, SparkCodec(SparkEnv.get.conf))
    val reader = QuiverRuntime.broadcastCache.open(source, shim.taskScope(context), shareDecoded)
    new ColumnarBatches(reader)
  }
}
