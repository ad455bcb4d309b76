package org.apache.spark.sql.comet.quiver

import org.apache.spark.SparkException
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.physical.BroadcastMode
import org.apache.spark.sql.comet.{CometBroadcastExchangeExec, CometBroadcastValue}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Comet's broadcast exchange, its broadcast value made and sent by Comet as ever, read by Comet's
 * native operators through Quiver's executor cache instead of Comet's per-task decode. A subclass,
 * so that Comet's operators, which find their broadcast inputs by class (also inside AQE's query
 * stages and reused exchanges), take it as their own.
 *
 * Equal only to its own kind: Spark keeps a rewritten child only if it differs from the original,
 * and Comet's exchange is equal to any other with the same plans.
 */
class QuiverCometBroadcastExchangeExec(
    originalPlan: SparkPlan,
    output: Seq[Attribute],
    mode: BroadcastMode,
    child: SparkPlan
) extends CometBroadcastExchangeExec(originalPlan, output, mode, child) {

  override def nodeName: String = "QuiverCometBroadcastExchange"

  override def executeColumnar(numPartitions: Int): RDD[ColumnarBatch] = {
    if (isCanonicalizedPlan) {
      throw SparkException.internalError("A canonicalized plan is not supposed to be executed.")
    }
    new QuiverCometBatchRDD(
      sparkContext,
      numPartitions,
      executeBroadcast[CometBroadcastValue](),
      conf.getConf(QuiverConf.ShareDecodedBroadcasts)
    )
  }

  override def doExecuteColumnar(): RDD[ColumnarBatch] = executeColumnar(getNumPartitions())

  override def withNewChildInternal(newChild: SparkPlan): CometBroadcastExchangeExec =
    new QuiverCometBroadcastExchangeExec(originalPlan, output, mode, newChild)

  override def canEqual(other: Any): Boolean = other.isInstanceOf[QuiverCometBroadcastExchangeExec]

  override def equals(other: Any): Boolean = other match {
    case exchange: QuiverCometBroadcastExchangeExec => super.equals(exchange)
    case _ => false
  }

  override def hashCode(): Int = super.hashCode()
}
