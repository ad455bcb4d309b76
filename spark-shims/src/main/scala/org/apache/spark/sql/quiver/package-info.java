/**
 * Quiver's Spark-facing internals, written once for every supported release and compiled against
 * each; in a package under {@code org.apache.spark.sql} because they use Spark-private API. Here:
 * the JVM's Quiver state ({@code QuiverRuntime}), the settings' definitions ({@code QuiverConf}),
 * the driver side of a broadcast ({@code BroadcastBuilder}, {@code ArrowStreamEncoder}), Spark rows
 * as Arrow ({@code ArrowBatchIterator}, {@code ArrowSchemas}), Spark's block codec as Quiver's
 * ({@code SparkCodec}) and a task's scope over Spark's {@code TaskContext} ({@code
 * SparkTaskScope}).
 *
 * <p>It owns the per-JVM state: {@code QuiverRuntime} holds the allocator every Quiver buffer comes
 * from and the executor's one decoded-broadcast cache. Nothing here is API: the facade is {@code
 * dev.quiver.spark}.
 */
package org.apache.spark.sql.quiver;
