/**
 * Quiver's API for Spark applications and engines, written once and compiled against every
 * supported Spark release: the keys of its settings ({@code QuiverSettings}), the plugin that
 * registers them and publishes the cache's metrics ({@code QuiverPlugin}), what Quiver did and
 * holds in this JVM and on each executor ({@code QuiverMetrics}, {@code ExecutorCacheReport}), and
 * a {@code DataFrame}'s rows as Arrow batches ({@code ArrowBatches}). Its subpackages hold the
 * Arrow broadcast, the joins over it and the Arrow shuffle exchange.
 *
 * <p>It owns no state: the JVM's allocator and decoded-broadcast cache belong to {@code
 * org.apache.spark.sql.quiver.QuiverRuntime}, and everything Spark-private it needs is reached
 * through {@code org.apache.spark.sql.quiver}.
 */
package dev.quiver.spark;
