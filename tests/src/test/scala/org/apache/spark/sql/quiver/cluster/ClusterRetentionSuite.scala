package org.apache.spark.sql.quiver.cluster

import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import dev.quiver.spark.{ExecutorCacheReport, QuiverSettings}
import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD}
import dev.quiver.spark.join.QuiverJoins
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.functions.{broadcast, col}
import org.apache.spark.sql.quiver.SparkRows
import org.scalatest.funsuite.AnyFunSuite

/**
 * Retention on (the default) in two executor JVMs: a broadcast decodes once per executor for as
 * long as Spark keeps it, a join builds its table once per executor, dropping a broadcast frees
 * its entries on every executor, and an executor killed mid-job leaves the others right. The
 * tests share the application and run in order.
 */
class ClusterRetentionSuite extends AnyFunSuite with ClusterApp {

  override protected def appSettings: Map[String, String] =
    Map(QuiverSettings.RetainDecodedBroadcasts -> "true")

  private lazy val dimFrame = longsFrame(20000)
  private lazy val dim = ArrowBroadcast.of(dimFrame)

  private def figure(reports: Map[String, ExecutorCacheReport], name: String): Map[String, Long] =
    reports.map { case (id, report) => id -> report(name) }

  private def each(executors: Set[String], value: Long): Map[String, Long] =
    executors.map(_ -> value).toMap

  test("sequential jobs: one decode per executor JVM, then retained reads") {
    dim
    val before = reports()
    val reads = (1 to 3).flatMap(_ => readOnEverySlot(dim, share = true).reads)
    val after = reports()
    assertEveryTaskReadAll(reads, dimFrame)
    val tasks = reads.groupBy(_.executorId).map { case (id, r) => id -> r.size.toLong }
    Seq("broadcast.decodes", "broadcast.sharedReads", "broadcast.retainedReads").foreach { name =>
      record(s"$name over three jobs", growth(before, after, name))
    }
    assert(growth(before, after, "broadcast.decodes") == each(executorIds, 1))
    val served = Seq("broadcast.decodes", "broadcast.sharedReads", "broadcast.retainedReads")
      .map(growth(before, after, _))
      .reduce((a, b) => a.map { case (id, n) => id -> (n + b(id)) })
    assert(served == tasks, "every read decoded, shared or retained")
    assert(growth(before, after, "broadcast.retainedReads").values.forall(_ >= 2))
    assert(figure(after, "broadcast.entriesRetained").values.forall(_ >= 1))
    assert(figure(after, "broadcast.entriesHeld") == each(executorIds, 0))
  }

  private lazy val probe: DataFrame = spark
    .range(0, 4000, 1, 8)
    .selectExpr("CASE WHEN id % 17 = 0 THEN NULL ELSE id % 1500 END AS pk", "id AS pid")

  private lazy val customersFrame: DataFrame = spark
    .range(0, 1200, 1, 2)
    .selectExpr("id", "concat('customer-', id) AS name", "CAST(id % 7 AS INT) AS segment")
  private lazy val customers = ArrowBroadcast.of(customersFrame)

  /** The executors' caches before the first join read `customers`. */
  private lazy val beforeJoins = {
    customers
    reports()
  }

  /** Quiver's join gives Spark's rows; each executor decodes and builds at most once for it. */
  private def checkJoin(name: String, sparkJoin: => DataFrame)(quiver: => DataFrame): Unit = {
    val expected = SparkRows.sorted(sparkJoin.collect().toSeq)
    beforeJoins
    val before = reports()
    val joined = quiver
    val rows = SparkRows.sorted(joined.collect().toSeq)
    val after = reports()
    assert(rows == expected, s"$name: rows differ from Spark's")
    growth(before, after, "broadcast.decodes").foreach { case (id, n) =>
      assert(n <= 1, s"$name: executor $id decoded $n times")
    }
    val builds = growth(before, after, "broadcast.derivedBuilds")
    record(s"$name: tables built", builds)
    builds.foreach { case (id, n) => assert(n <= 1, s"$name: executor $id built $n tables") }
    val reuses = growth(before, after, "broadcast.derivedReuses")
    val reads = builds.map { case (id, n) => id -> (n + reuses(id)) }
    val tasks = after.map { case (id, report) =>
      id -> (report.tasksEnded - before.get(id).fold(0L)(_.tasksEnded))
    }
    assert(reads == tasks, s"$name: each probe task reads the build side once")
  }

  for (joinType <- Seq("inner", "left_outer", "left_semi", "left_anti", "right_outer"))
    test(s"$joinType hash join: Spark's rows, one table per executor JVM") {
      checkJoin(
        joinType,
        if (joinType == "right_outer") {
          broadcast(customersFrame).join(probe, customersFrame("id") === probe("pk"), joinType)
        } else probe.join(broadcast(customersFrame), probe("pk") === customersFrame("id"), joinType)
      )(QuiverJoins.broadcastHashJoin(probe, customers, Seq("pk"), Seq("id"), joinType))
    }

  for (joinType <- Seq("inner", "left_outer"))
    test(s"$joinType nested loop join: Spark's rows, one row array per executor JVM") {
      def condition(pk: Column, id: Column, segment: Column): Column =
        pk >= id + 1195 && segment =!= 3
      checkJoin(
        joinType,
        probe.join(
          broadcast(customersFrame),
          condition(probe("pk"), customersFrame("id"), customersFrame("segment")),
          joinType
        )
      )(
        QuiverJoins.broadcastNestedLoopJoin(
          probe,
          customers,
          condition(col("pk"), col("id"), col("segment")),
          joinType
        )
      )
    }

  test("the joins of one broadcast decoded it once per executor JVM, across their queries") {
    // Each executor ran probe tasks of the seven queries above; retention kept its one decode.
    val decodes = growth(beforeJoins, reports(), "broadcast.decodes")
    record("decodes over the seven join queries", decodes)
    assert(decodes == each(executorIds, 1))
  }

  test("unpersist, then destroy: each executor frees its retained entries at its next task") {
    val before = reports()
    val retained = figure(before, "broadcast.entriesRetained")
    assert(retained.values.forall(_ >= 2), s"dim and customers retained: $retained")
    dim.value.unpersist(true)
    assert(taskOnEverySlot() == executorIds)
    val unpersisted = reports()
    record("dropped after unpersist", growth(before, unpersisted, "broadcast.evictions.dropped"))
    assert(growth(before, unpersisted, "broadcast.evictions.dropped") == each(executorIds, 1))
    assert(figure(unpersisted, "broadcast.entriesRetained") == retained.map { case (id, n) =>
      id -> (n - 1)
    })

    customers.value.destroy()
    assert(taskOnEverySlot() == executorIds)
    val destroyed = reports()
    assert(figure(destroyed, "broadcast.entriesRetained") == each(executorIds, 0))
    assert(figure(destroyed, "broadcast.bytesRetained") == each(executorIds, 0))
    assert(figure(destroyed, "allocatedBytes") == each(executorIds, 0))
  }

  test(
    "an executor JVM killed mid-job: Spark retries its tasks, the survivor holds nothing stale"
  ) {
    val frame = longsFrame(5000)
    val broadcast = ArrowBroadcast.of(frame)
    val folder = Files.createTempDirectory("quiver-cluster-kill")
    val folderName = folder.toString
    val tasks = 8
    implicit val context: ExecutionContext = ExecutionContext.global
    val job = Future {
      new ArrowBroadcastRDD(sc, broadcast.value, tasks, true)
        .mapPartitions(batches => Iterator(ClusterTasks.readThenWait(batches, folderName)))
        .collect()
        .toSeq
    }
    awaitCondition("tasks waiting in both executor JVMs") {
      // A job that ended already (it failed) says why.
      job.value.foreach(outcome => fail(s"the job ended before the kill: $outcome"))
      waiting(folder).map(_._1).toSet.size == SharedCluster.Executors
    }
    val (victim, victimPid) = waiting(folder).minBy(_._1)
    val survivors = executorIds - victim
    assert(ProcessHandle.of(victimPid).map[Boolean](_.destroyForcibly()).orElse(false))
    Files.createFile(folder.resolve("go"))
    val reads = Await.result(job, Duration(3, TimeUnit.MINUTES))

    assert(reads.size == tasks)
    assert(!reads.map(_.pid).contains(victimPid), "a result from the killed JVM")
    val expected = frame.selectExpr("count(*)", "sum(v)").head()
    assert(reads.forall(r => r.rows == expected.getLong(0) && r.sum == expected.getLong(1)))
    info(s"killed executor $victim (pid $victimPid); survivors ${survivors.mkString(", ")}")
    val afterJob = reports(survivors)
    assert(figure(afterJob, "broadcast.entriesHeld") == each(survivors, 0))
    assert(figure(afterJob, "broadcast.bytesHeld") == each(survivors, 0))

    broadcast.value.destroy()
    val live = awaitExecutors(SharedCluster.Executors) -- Set(victim)
    assert(taskOnEverySlot() == live)
    val end = reports(live)
    assert(figure(end, "broadcast.entriesRetained") == each(live, 0))
    assert(figure(end, "allocatedBytes") == each(live, 0))
  }

  /** The (executor, pid) of every task waiting in [[ClusterTasks.readThenWait]]. */
  private def waiting(folder: Path): Seq[(String, Long)] =
    Option(folder.toFile.listFiles()).toSeq.flatten
      .filter(_.getName.startsWith("task-"))
      .flatMap { file =>
        new String(Files.readAllBytes(file.toPath), "UTF-8").split(" ") match {
          case Array(executor, pid) => Some(executor -> pid.toLong)
          case _ => None // being written
        }
      }
}
