/**
 * The planning behind {@code dev.quiver.spark.join.QuiverJoins}: the build side enters Spark's plan
 * as a {@code QuiverBroadcastRelation}, which {@code SharedBuildStrategy} plans as Spark's own
 * broadcast join over a {@code SharedBuildExec}, so that analysis, optimization and the probe are
 * Spark's; {@code BroadcastScanExec} reads the relation wherever it is not such a build side.
 *
 * <p>It owns the build side each executor derives once from the decoded broadcast ({@code
 * BuildSideDerivation}, read through {@code SharedBuildBroadcast}), kept with the cache entry, and
 * the reads' SQL metrics.
 */
package org.apache.spark.sql.quiver.join;
