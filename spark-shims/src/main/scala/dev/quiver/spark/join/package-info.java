/**
 * {@code QuiverJoins}: broadcast hash and nested loop joins whose build side is an Arrow broadcast
 * that the overlapping tasks of an executor decode once between them, each returning the rows and
 * schema Spark's own join of the same inputs returns.
 *
 * <p>It owns only the checks made when a join is called; the planning and the build side each
 * executor derives belong to {@code org.apache.spark.sql.quiver.join}.
 */
package dev.quiver.spark.join;
