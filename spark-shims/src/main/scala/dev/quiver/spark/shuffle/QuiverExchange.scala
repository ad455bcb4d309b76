package dev.quiver.spark.shuffle

import dev.quiver.annotation.Public
import dev.quiver.shuffle.BlockCodec
import org.apache.spark.ShuffleDependency
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Arrow batches repartitioned through Spark's shuffle as Quiver shuffle blocks (the block format
 * Comet's native shuffle writes). Made by [[QuiverShuffle.exchange]].
 *
 * The map side runs once, when the first of the reduce-side RDDs is computed (or when the
 * dependency is submitted with `SparkContext.submitMapStage`); both reduce-side RDDs read the same
 * shuffle output.
 */
@Public
trait QuiverExchange {

  /** The schema of the rows exchanged. */
  def schema: StructType

  def partitioning: ShufflePartitioning

  def numPartitions: Int = partitioning.numPartitions

  /**
   * The codec the map side compresses blocks with: the configured `spark.quiver.shuffle.codec`
   * when Spark does not compress shuffle output, `none` when it does (so bytes are compressed
   * once).
   */
  def blockCodec: BlockCodec

  /** The shuffle: its map side writes the blocks. */
  def dependency: ShuffleDependency[_, _, _]

  /**
   * The decoding path: each reduce partition as Arrow-backed `ColumnarBatch`es (`ArrowColumnVector`
   * columns), small batches coalesced up to `spark.quiver.shuffle.batchSize` rows. A batch is valid
   * until the iterator is asked for the next one; the reader closes it then, and at task end.
   */
  def batches: RDD[ColumnarBatch]

  /**
   * The raw-block path: each reduce partition as its blocks, bodies still compressed, in a direct
   * buffer reused from block to block (see [[RawShuffleBlock]]).
   */
  def rawBlocks: RDD[RawShuffleBlock]

  /** What the reduce side read; updated by both paths. */
  def metrics: QuiverShuffleMetrics
}
