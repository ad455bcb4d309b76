package dev.quiver.spark.broadcast

import dev.quiver.annotation.Public
import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Reads a broadcast of compressed Arrow IPC streams as `ColumnarBatch`es, every partition the
 * whole broadcast: one partition per consumer task (zip it with the probe side). Tasks of one
 * executor that overlap share one decoded copy, unless
 * `spark.quiver.broadcast.shareDecoded.enabled` was false when the RDD was made.
 *
 * A batch is valid until the partition's iterator is asked for the next one; Quiver closes it then,
 * and at task end.
 *
 * What each task's read cost (decode time, wait time, and whether it decoded the broadcast or read
 * a decode another task made or the executor retained) is added to [[readMetrics]], named
 * accumulators that Spark shows per task.
 */
@Public
class ArrowBroadcastRDD(
    sc: SparkContext,
    broadcast: Broadcast[Array[Array[Byte]]],
    numPartitions: Int,
    shareDecoded: Boolean
) extends RDD[ColumnarBatch](sc, Nil) {

  /** Shares decoded copies as the current session's setting says. */
  def this(sc: SparkContext, broadcast: Broadcast[Array[Array[Byte]]], numPartitions: Int) =
    this(sc, broadcast, numPartitions, QuiverConf.shareDecodedBroadcasts(SQLConf.get))

  /** What this RDD's tasks paid to read the broadcast; registered with `sc` as the RDD is made. */
  val readMetrics: BroadcastReadMetrics = BroadcastReadMetrics(sc)

  override protected def getPartitions: Array[Partition] =
    Array.tabulate[Partition](numPartitions)(i => new ArrowBroadcastRDD.Slot(i))

  override def compute(split: Partition, context: TaskContext): Iterator[ColumnarBatch] = {
    val reader = QuiverBroadcasts.open(broadcast, BroadcastStreams.byteArrays, shareDecoded)
    readMetrics.add(reader)
    QuiverBroadcasts.columnarBatches(reader)
  }
}

private object ArrowBroadcastRDD {

  private class Slot(override val index: Int) extends Partition
}
