package dev.quiver.spark.shuffle

import dev.quiver.annotation.Public
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.quiver.shuffle.{ShuffleExchange, ShuffleSettings}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Repartitions Arrow batches through Spark's shuffle in Quiver's block format.
 *
 * {{{
 * val exchange = QuiverShuffle.exchange(batches, schema, ShufflePartitioning.hash(8, "customer"))
 * exchange.batches.mapPartitions(...)    // JVM consumers: decoded ColumnarBatches
 * exchange.rawBlocks.mapPartitions(...)  // native consumers: compressed block bodies
 * }}}
 */
@Public
object QuiverShuffle {

  /**
   * An exchange of `batches` (rows of `schema`) by `partitioning`.
   *
   * Every input batch must be Arrow-backed (its columns `ArrowColumnVector`s whose vectors match
   * `schema`, as Spark's `ArrowWriter` lays them out). The map side reads each batch before asking
   * for the next one and never closes it: the producer owns its batches and may reuse them.
   *
   * Quiver's `spark.quiver.shuffle.*` settings are read here, from the current session.
   *
   * @throws IllegalArgumentException if a hash key is not a column of `schema`, or is of a type
   *   Spark cannot hash (a map)
   */
  def exchange(
      batches: RDD[ColumnarBatch],
      schema: StructType,
      partitioning: ShufflePartitioning
  ): QuiverExchange = {
    QuiverConf.register()
    new ShuffleExchange(
      batches,
      schema,
      partitioning,
      ShuffleSettings.fromSession(batches.sparkContext)
    )
  }
}
