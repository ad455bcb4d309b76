package dev.quiver.spark.join

import dev.quiver.annotation.Public
import org.apache.spark.sql.quiver.JavaLists
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.quiver.join.{BroadcastJoins, JoinKind}

/**
 * Broadcast joins that read their build side through Quiver's decoded-broadcast cache: the build
 * side is broadcast as compressed Arrow IPC, and the tasks of one executor that run at the same
 * time decode it once between them (unless `spark.quiver.broadcast.shareDecoded.enabled` is
 * false when the join is called).
 *
 * Each join returns the rows and the schema Spark's own join of the same inputs returns (see
 * `docs/joins.md`). The probe side is streamed, one task per probe partition; each task indexes
 * the whole build side for itself. Calling a join checks it and broadcasts the build side (a Spark
 * job); the join itself runs when the result is evaluated, as often as it is evaluated, reusing
 * the broadcast, which Spark cleans up once the result is no longer referenced.
 */
@Public
object QuiverJoins {

  private val HashJoin = "Quiver's broadcast hash join"
  private val NestedLoopJoin = "Quiver's broadcast nested loop join"

  /**
   * `probe` joined with `build` on `probeKeys(i) = buildKeys(i)` for every `i`, as
   * `probe.join(broadcast(build), condition, joinType)` would join them; for `right_outer`, as
   * `broadcast(build).join(probe, condition, "right_outer")` would (build columns first, every
   * probe row kept).
   *
   * @param probeKeys columns of `probe`, named as `probe.col` takes them
   * @param buildKeys columns of `build`, as many as `probeKeys`
   * @param joinType `inner`, `left_outer`, `left_semi`, `left_anti` or `right_outer`, spelled any
   *   way `Dataset.join` accepts
   */
  def broadcastHashJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      joinType: String
  ): DataFrame =
    BroadcastJoins.hashJoin(probe, build, probeKeys, buildKeys, hashJoinKind(joinType))

  /** [[broadcastHashJoin]] for callers in Java. */
  def broadcastHashJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKeys: java.util.List[String],
      buildKeys: java.util.List[String],
      joinType: String
  ): DataFrame =
    broadcastHashJoin(
      probe,
      build,
      JavaLists.toSeq(probeKeys),
      JavaLists.toSeq(buildKeys),
      joinType
    )

  /**
   * [[broadcastHashJoin]] against a build side already broadcast (by [[ArrowBroadcast.of]] or
   * [[ArrowBroadcast.ofStreams]]); `buildKeys` name columns of its schema.
   */
  def broadcastHashJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      probeKeys: Seq[String],
      buildKeys: Seq[String],
      joinType: String
  ): DataFrame =
    BroadcastJoins.hashJoin(probe, build, probeKeys, buildKeys, hashJoinKind(joinType))

  /**
   * The rows of `probe` for which `probeKey NOT IN (SELECT buildKey FROM build)` holds, with SQL's
   * null semantics: every probe row if `build` is empty; none if a build key is null; otherwise
   * the probe rows whose key is not null and equals no build key.
   */
  def broadcastNullAwareAntiJoin(
      probe: DataFrame,
      build: DataFrame,
      probeKey: String,
      buildKey: String
  ): DataFrame =
    BroadcastJoins.hashJoin(probe, build, Seq(probeKey), Seq(buildKey), JoinKind.NullAwareLeftAnti)

  /**
   * `probe` joined with `build` on any `condition` over their columns, as
   * `probe.join(broadcast(build), condition, joinType)` would join them. Every probe row is tested
   * against every build row. For a cross join, pass `lit(true)`.
   *
   * @param joinType `inner` (or `cross`), `left_outer`, `left_semi` or `left_anti`
   */
  def broadcastNestedLoopJoin(
      probe: DataFrame,
      build: DataFrame,
      condition: Column,
      joinType: String
  ): DataFrame =
    BroadcastJoins.nestedLoopJoin(probe, build, condition, nestedLoopJoinKind(joinType))

  /**
   * [[broadcastNestedLoopJoin]] against a build side already broadcast; `condition` names its
   * columns without a qualifier (`col("name")`).
   */
  def broadcastNestedLoopJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      condition: Column,
      joinType: String
  ): DataFrame =
    BroadcastJoins.nestedLoopJoin(probe, build, condition, nestedLoopJoinKind(joinType))

  /**
   * [[broadcastHashJoin]] against a build side already broadcast, for callers in Java.
   */
  def broadcastHashJoin(
      probe: DataFrame,
      build: ArrowBroadcast,
      probeKeys: java.util.List[String],
      buildKeys: java.util.List[String],
      joinType: String
  ): DataFrame =
    broadcastHashJoin(
      probe,
      build,
      JavaLists.toSeq(probeKeys),
      JavaLists.toSeq(buildKeys),
      joinType
    )

  private def hashJoinKind(joinType: String): JoinKind = {
    QuiverConf.register()
    JoinKind.parse(joinType, HashJoin, JoinKind.HashJoinKinds)
  }

  private def nestedLoopJoinKind(joinType: String): JoinKind = {
    QuiverConf.register()
    JoinKind.parse(joinType, NestedLoopJoin, JoinKind.NestedLoopJoinKinds)
  }

}
