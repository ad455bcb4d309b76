package org.apache.spark.sql.quiver.join

import dev.quiver.spark.broadcast.{ArrowBroadcast, BroadcastStreams, QuiverBroadcasts}
import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection}
import org.apache.spark.sql.execution.LeafExecNode
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * A Quiver broadcast's rows, in one task: how Spark reads the relation where it is not the build
 * side of a join Quiver plans (a full outer join, say, or the relation queried alone). Its SQL
 * metrics tell what the read cost (see [[BroadcastReadSqlMetrics]]).
 */
final private[quiver] case class BroadcastScanExec(
    broadcast: ArrowBroadcast,
    output: Seq[Attribute],
    shareDecoded: Boolean
) extends LeafExecNode {

  override def nodeName: String = "QuiverBroadcastScan"

  override lazy val metrics: Map[String, SQLMetric] = BroadcastReadSqlMetrics(sparkContext).asMap

  override def simpleString(maxFields: Int): String =
    s"$nodeName broadcast ${broadcast.value.id} ${output.mkString("[", ", ", "]")}"

  override protected def doExecute(): RDD[InternalRow] =
    new BroadcastScanRDD(
      sparkContext,
      broadcast.value,
      output,
      shareDecoded,
      BroadcastReadSqlMetrics.of(metrics)
    )
}

/** The scan's one partition: the whole broadcast read through the cache, as unsafe rows. */
final private[quiver] class BroadcastScanRDD(
    sc: SparkContext,
    broadcast: Broadcast[Array[Array[Byte]]],
    output: Seq[Attribute],
    shareDecoded: Boolean,
    reads: BroadcastReadSqlMetrics
) extends RDD[InternalRow](sc, Nil) {

  override protected def getPartitions: Array[Partition] = Array(BroadcastScanRDD.OnlyPartition)

  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] = {
    val reader = QuiverBroadcasts.open(broadcast, BroadcastStreams.byteArrays, shareDecoded)
    reads.add(reader)
    val project = UnsafeProjection.create(output, output)
    QuiverBroadcasts
      .columnarBatches(reader)
      .flatMap(batch => Iterator.tabulate(batch.numRows())(batch.getRow).map(project))
  }
}

private object BroadcastScanRDD {

  private object OnlyPartition extends Partition {
    override val index: Int = 0
  }
}
