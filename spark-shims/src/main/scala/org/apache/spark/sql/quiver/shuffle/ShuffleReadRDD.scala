package org.apache.spark.sql.quiver.shuffle

import scala.reflect.ClassTag

import dev.quiver.spark.shuffle.{QuiverShuffleMetrics, RawShuffleBlock}
import org.apache.spark.{
  InterruptibleIterator,
  MapOutputTrackerMaster,
  Partition,
  ShuffleDependency,
  SparkEnv,
  TaskContext
}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The reduce side of an exchange: one partition per reduce partition of `dependency`, each read
 * by `read` over a [[ReduceTask]]. Wrapped in Spark's `InterruptibleIterator`, so a killed task
 * stops at the next batch or block (the read in progress finishes first).
 */
abstract private[quiver] class ShuffleReadRDD[T: ClassTag](
    dependency: ShuffleDependency[_, _, _],
    settings: ShuffleSettings,
    metrics: QuiverShuffleMetrics
) extends RDD[T](dependency.rdd.context, List(dependency)) {

  protected def read(task: ReduceTask): Iterator[T]

  override protected def getPartitions: Array[Partition] =
    Array.tabulate[Partition](dependency.partitioner.numPartitions)(ShuffleReadRDD.ReducePartition)

  override protected def getPreferredLocations(partition: Partition): Seq[String] =
    SparkEnv.get.mapOutputTracker match {
      case tracker: MapOutputTrackerMaster =>
        tracker.getPreferredLocationsForShuffle(dependency, partition.index)
      case _ => Nil
    }

  override def compute(split: Partition, context: TaskContext): Iterator[T] = {
    val task = new ReduceTask(dependency, split.index, context, settings, metrics)
    new InterruptibleIterator(context, read(task))
  }
}

private[quiver] object ShuffleReadRDD {

  final case class ReducePartition(index: Int) extends Partition
}

/** The decoding path: `ColumnarBatch`es, small ones coalesced. */
private[quiver] class DecodedBatchesRDD(
    dependency: ShuffleDependency[_, _, _],
    settings: ShuffleSettings,
    metrics: QuiverShuffleMetrics
) extends ShuffleReadRDD[ColumnarBatch](dependency, settings, metrics) {

  override protected def read(task: ReduceTask): Iterator[ColumnarBatch] =
    new DecodedBatches(task, settings.batchSize)
}

/**
 * The raw-block path: compressed block bodies for native decoders.
 *
 * @param fieldCount the exchange schema's number of top-level fields: a block that declares
 *   another is corrupt
 */
private[quiver] class RawBlocksRDD(
    dependency: ShuffleDependency[_, _, _],
    settings: ShuffleSettings,
    metrics: QuiverShuffleMetrics,
    fieldCount: Int
) extends ShuffleReadRDD[RawShuffleBlock](dependency, settings, metrics) {

  override protected def read(task: ReduceTask): Iterator[RawShuffleBlock] =
    new RawBlocks(task, fieldCount)
}
