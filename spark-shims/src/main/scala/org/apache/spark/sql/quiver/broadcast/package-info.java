/**
 * The executor side of the Arrow broadcast: the Spark broadcast as the cache's source ({@code
 * SparkBroadcastSource}), a read of the decoded copy as Spark {@code ColumnarBatch}es ({@code
 * ColumnarBatches}), Spark's storage memory as the pool retained copies are counted in ({@code
 * SparkStorageMemory}), and the cache's figures as Spark metrics ({@code CacheMetrics}) and, on the
 * driver, as the executors last reported them ({@code ExecutorCacheReports}).
 *
 * <p>It owns the retained copies' share of Spark's storage memory and the driver's latest report
 * per executor; the cache itself is common's ({@code dev.quiver.broadcast}).
 */
package org.apache.spark.sql.quiver.broadcast;
