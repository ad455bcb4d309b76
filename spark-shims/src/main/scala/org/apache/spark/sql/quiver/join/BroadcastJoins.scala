package org.apache.spark.sql.quiver.join

import dev.quiver.annotation.Internal
import java.util.Collections

import org.apache.spark.sql.quiver.shim.SparkShims
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.QuiverConf

/**
 * Quiver's broadcast joins, behind [[dev.quiver.spark.join.QuiverJoins]]. In a package under
 * `org.apache.spark.sql` for the query execution of the probe side. Each join is planned (and so
 * checked) before its build side is broadcast.
 */
@Internal
object BroadcastJoins {

  def hashJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): DataFrame = {
    val spec = JoinPlanner.hashJoin(probe, build, probeKeys, buildKeys, kind)
    run(probe, spec, ArrowBroadcast.of(build))
  }

  /** A hash join against a broadcast already made; its columns are named as in its schema. */
  def hashJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      kind: JoinKind
  ): DataFrame =
    run(
      probe,
      JoinPlanner.hashJoin(probe, standIn(probe, build), probeKeys, buildKeys, kind),
      build
    )

  def nestedLoopJoin(
      probe: DataFrame,
      build: DataFrame,
      condition: Column,
      kind: JoinKind
  ): DataFrame = {
    val spec = JoinPlanner.nestedLoopJoin(probe, build, condition, kind)
    run(probe, spec, ArrowBroadcast.of(build))
  }

  def nestedLoopJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      condition: Column,
      kind: JoinKind
  ): DataFrame =
    run(probe, JoinPlanner.nestedLoopJoin(probe, standIn(probe, build), condition, kind), build)

  /** Joins each probe partition with the whole build side, in the probe side's tasks. */
  private def run(probe: DataFrame, spec: JoinSpec, build: ArrowBroadcast): DataFrame = {
    // The sharing setting is the session's when the join is called, read here on the driver.
    val task =
      new BroadcastJoinTask(spec, build.value, QuiverConf.shareDecodedBroadcasts(SQLConf.get))
    val rows = probe.queryExecution.toRdd.mapPartitionsWithIndex(task.run)
    SparkShims.get.createDataFrame(probe.sparkSession, rows, spec.output)
  }

  /** An empty `DataFrame` of the broadcast's schema: Spark analyzes the join against it. */
  private def standIn(probe: DataFrame, build: ArrowBroadcast): DataFrame =
    probe.sparkSession.createDataFrame(Collections.emptyList[Row](), build.schema)
}
