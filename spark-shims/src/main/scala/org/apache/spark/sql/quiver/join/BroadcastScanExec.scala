package org.apache.spark.sql.quiver.join

import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection}
import org.apache.spark.sql.execution.LeafExecNode

/**
 * A Quiver broadcast's rows, in one task: how Spark reads the relation where it is not the build
 * side of a join Quiver plans (a full outer join, say, or the relation queried alone).
 */
final private[quiver] case class BroadcastScanExec(
    broadcast: ArrowBroadcast,
    output: Seq[Attribute],
    shareDecoded: Boolean
) extends LeafExecNode {

  override def nodeName: String = "QuiverBroadcastScan"

  override def simpleString(maxFields: Int): String =
    s"$nodeName broadcast ${broadcast.value.id} ${output.mkString("[", ", ", "]")}"

  override protected def doExecute(): RDD[InternalRow] = {
    val columns = output
    new ArrowBroadcastRDD(sparkContext, broadcast.value, 1, shareDecoded).mapPartitions { batches =>
      val project = UnsafeProjection.create(columns, columns)
      batches.flatMap(batch => Iterator.tabulate(batch.numRows())(batch.getRow).map(project))
    }
  }
}
