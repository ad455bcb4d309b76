package org.apache.spark.sql.quiver.shuffle

import dev.quiver.annotation.Internal
import dev.quiver.shuffle.BlockCodec
import org.apache.spark.sql.quiver.QuiverRuntime
import org.apache.spark.sql.quiver.shim.SparkShims
import dev.quiver.spark.shuffle.{
  QuiverExchange,
  QuiverShuffleMetrics,
  RawShuffleBlock,
  ShufflePartitioning
}
import org.apache.spark.{ShuffleDependency, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * A [[QuiverExchange]]: the map side as a `ShuffleDependency` on Spark's shuffle, keyed by reduce
 * partition, whose records are [[EncodedBlock]]s written by [[ShuffleBlockSerializer]]; the reduce
 * side as two RDDs over that dependency.
 */
@Internal
class ShuffleExchange(
    input: RDD[ColumnarBatch],
    override val schema: StructType,
    override val partitioning: ShufflePartitioning,
    settings: ShuffleSettings
) extends QuiverExchange {

  partitioning match {
    case hash: ShufflePartitioning.Hash => RowPartitioner.partitionIdExpression(hash, schema)
    case _ =>
  }

  override val blockCodec: BlockCodec = settings.blockCodec

  override val dependency: ShuffleDependency[Int, EncodedBlock, EncodedBlock] =
    new ShuffleDependency[Int, EncodedBlock, EncodedBlock](
      ShuffleExchange.encodeBlocks(input, schema, partitioning, settings),
      new PartitionIds(partitioning.numPartitions),
      new ShuffleBlockSerializer
    )

  override val metrics: QuiverShuffleMetrics = QuiverShuffleMetrics(input.sparkContext)

  override lazy val batches: RDD[ColumnarBatch] =
    new DecodedBatchesRDD(dependency, settings, metrics)

  override lazy val rawBlocks: RDD[RawShuffleBlock] =
    new RawBlocksRDD(dependency, settings, metrics, schema.length)
}

@Internal
object ShuffleExchange {

  /** The map side's records: each input batch split into one block per reduce partition. */
  private def encodeBlocks(
      input: RDD[ColumnarBatch],
      schema: StructType,
      partitioning: ShufflePartitioning,
      settings: ShuffleSettings
  ): RDD[(Int, EncodedBlock)] =
    input.mapPartitionsWithIndex { (mapIndex, batches) =>
      val context = TaskContext.get()
      val allocator = QuiverRuntime.allocator.newChildAllocator(
        s"quiver-shuffle-write-${context.taskAttemptId()}",
        0,
        Long.MaxValue
      )
      SparkShims.get.taskScope(context).onCompletion(() => allocator.close())
      val splitter = new BatchSplitter(
        RowPartitioner(partitioning, schema, mapIndex),
        partitioning.numPartitions,
        settings.blockCodec,
        settings.maxBlockBytes,
        allocator
      )
      batches.flatMap(splitter.split)
    }
}
