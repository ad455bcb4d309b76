/**
 * The Arrow shuffle exchange: {@code QuiverShuffle.exchange} repartitions Arrow batches through
 * Spark's shuffle as blocks in the format Comet's native shuffle writes, by a {@code
 * ShufflePartitioning}; the resulting {@code QuiverExchange} reads each reduce partition as decoded
 * {@code ColumnarBatch}es or as {@code RawShuffleBlock}s for an engine that decodes natively, and
 * sums what its reduce side read in {@code QuiverShuffleMetrics}.
 *
 * <p>It owns the exchange's API only: the map and reduce sides are {@code
 * org.apache.spark.sql.quiver.shuffle}, the block format and its readers {@code dev.quiver.shuffle}
 * in common.
 */
package dev.quiver.spark.shuffle;
