/**
 * The Arrow shuffle exchange over Spark's own shuffle manager. Map side: {@code BatchSplitter}
 * splits each batch by reduce partition ({@code RowPartitioner}) and encodes each part as one
 * {@code EncodedBlock}, written by {@code ShuffleBlockSerializer}. Reduce side: {@code
 * ShuffleReadRDD} reads each partition's map outputs ({@code ShuffleStreams}, {@code MapOutputs})
 * through common's block readers, decoded ({@code DecodedBatches}) or raw ({@code RawBlocks}).
 *
 * <p>It owns each reduce task's read ({@code ReduceTask}): its allocator, readers and decompression
 * buffers, closed when the task completes.
 */
package org.apache.spark.sql.quiver.shuffle;
