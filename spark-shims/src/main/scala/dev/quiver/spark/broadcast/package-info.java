/**
 * The Arrow broadcast: {@code ArrowBroadcast} builds one (from a {@code DataFrame}, or from the
 * compressed Arrow IPC streams an engine already has) within Spark's broadcast limits, and {@code
 * ArrowBroadcastRDD} reads it in every task as {@code ColumnarBatch}es through the executor's
 * decoded-broadcast cache, adding what each task's read cost to {@code BroadcastReadMetrics}.
 *
 * <p>It owns the figures of a build and the per-task accumulators of a read. The Spark broadcast
 * ({@code ArrowBroadcast.value}) is an ordinary one, whose life is the caller's and Spark's
 * (destroyed, unpersisted, or cleaned up once nothing refers to it); the decoded copies belong to
 * the executor's cache ({@code dev.quiver.broadcast} in common).
 */
package dev.quiver.spark.broadcast;
