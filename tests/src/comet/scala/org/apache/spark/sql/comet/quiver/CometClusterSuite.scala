package org.apache.spark.sql.comet.quiver

import java.nio.file.Files

import scala.collection.mutable

import dev.quiver.bench.CometJoin
import dev.quiver.spark.{QuiverMetrics, QuiverSettings}
import org.apache.spark.TaskContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.comet.CometBroadcastValue
import org.apache.spark.sql.quiver.SparkRows
import org.apache.spark.sql.quiver.cluster.{ClusterFaults, FaultSignals}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Comet 1.2.0 on Quiver in two executor JVMs: each loads Comet's native library and runs Comet's
 * native broadcast hash join, whose build side it reads through its own Quiver cache, decoding
 * once per executor however many tasks it runs. Comet alone decodes once per wave of tasks. Last,
 * one executor JVM is killed in the middle of that join (issue 39's fault (b); see [[ClusterFaults]]
 * for what then holds).
 */
class CometClusterSuite extends AnyFunSuite with ClusterFaults {

  override protected def notHere: Option[String] = CometJoin.unavailable(None)

  override protected def appSettings: Map[String, String] =
    CometJoin.sessionConfig.toMap ++ Map(
      "spark.sql.extensions" -> CometJoin.ExtensionsOnQuiver,
      // Off-heap memory is outside the worker's account; Comet's pool needs little here.
      "spark.memory.offHeap.size" -> "512m",
      "spark.sql.autoBroadcastJoinThreshold" -> "-1",
      // A probe task a file (Spark would pack these small files into one task a slot).
      "spark.sql.files.openCostInBytes" -> "1m",
      "spark.sql.files.maxPartitionBytes" -> "1m",
      QuiverSettings.RetainDecodedBroadcasts -> "true"
    )

  private lazy val dataDir = Files.createTempDirectory("comet-cluster")

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally org.apache.spark.util.Utils.deleteRecursively(dataDir.toFile)

  /** fact: 12 files (three waves of tasks on four slots), keys 0 to 299; dim: keys 0 to 249. */
  private lazy val tables: Unit = {
    spark
      .range(0, 12000, 1, 12)
      .selectExpr("id % 300 AS key", "id AS f_long")
      .write
      .parquet(dataDir.resolve("fact").toString)
    spark
      .range(0, 250, 1, 1)
      .selectExpr("id AS k", "concat('segment-', id % 7) AS d_str")
      .write
      .parquet(dataDir.resolve("dim").toString)
    spark.read.parquet(dataDir.resolve("fact").toString).createOrReplaceTempView("fact")
    spark.read.parquet(dataDir.resolve("dim").toString).createOrReplaceTempView("dim")
  }

  /** The join, its key column given by `key` (an expression over `f.key`). */
  private def query(key: String = "f.key"): String =
    s"SELECT /*+ BROADCAST(d) */ $key AS key, f.f_long, d.d_str FROM fact f JOIN dim d ON f.key = d.k"

  /** The broadcast Quiver's exchange made for `frame`, destroyed: its executors' entries go. */
  private def destroyBroadcast(frame: DataFrame): Unit =
    frame.queryExecution.executedPlan
      .collectFirst { case e: QuiverCometBroadcastExchangeExec => e }
      .foreach(_.executeBroadcast[CometBroadcastValue]().destroy())

  faultTest("each executor JVM decodes a Comet broadcast once, for all of its tasks") {
    tables
    spark.conf.set("spark.comet.enabled", "false")
    val expected = SparkRows.sorted(spark.sql(query()).collect().toSeq)
    spark.conf.set("spark.comet.enabled", "true")
    val tasks = mutable.Map.empty[String, Long]
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = tasks.synchronized {
        tasks(end.taskInfo.executorId) = tasks.getOrElse(end.taskInfo.executorId, 0L) + 1
      }
    }
    val before = reports()
    sc.addSparkListener(listener)
    val frame = spark.sql(query())
    val actual =
      try SparkRows.sorted(frame.collect().toSeq)
      finally {
        sc.listenerBus.waitUntilEmpty()
        sc.removeSparkListener(listener)
      }
    val after = reports()
    val plan = frame.queryExecution.executedPlan.toString
    assert(plan.contains("CometBroadcastHashJoin") && plan.contains("QuiverComet"), plan)
    assert(actual == expected)
    val decodes = growth(before, after, "broadcast.decodes") ++
      growth(before, after, "broadcast.privateDecodes").map { case (id, n) =>
        s"$id private" -> n
      }
    record("decodes", decodes)
    record("tasks", tasks.synchronized(tasks.toMap))
    // Tasks in both JVMs, and more than twice the slots: some executor ran waves of tasks, the
    // later ones finding the entry retained (Comet alone decodes once a wave).
    assert(executorIds.forall(tasks.contains), "tasks in both JVMs")
    assert(tasks.values.sum >= 2 * slots)
    assert(growth(before, after, "broadcast.decodes") == executorIds.map(_ -> 1L).toMap)
    assert(growth(before, after, "broadcast.privateDecodes").values.forall(_ == 0))
    destroyBroadcast(frame)
  }

  faultTest("an executor killed mid Comet-on-Quiver broadcast hash join") {
    tables
    spark.udf.register(
      "stop_here",
      (key: Long, folder: String) => CometFaultTasks.stopOnce(key, folder)
    )
    spark.conf.set("spark.comet.enabled", "false")
    val expected = SparkRows.sorted(spark.sql(query()).collect().toSeq)
    spark.conf.set("spark.comet.enabled", "true")
    var frame: DataFrame = null
    val (rows, kill) = killMidJob("comet") { folder =>
      // The probe tasks stop in a function Comet leaves to Spark, on the join's output: the native
      // plan is open then, its hash table built from the build side Quiver lent it.
      frame = spark.sql(query(s"stop_here(f.key, '$folder')"))
      frame.collect().toSeq
    }
    val plan = frame.queryExecution.executedPlan.toString
    assert(plan.contains("CometBroadcastHashJoin") && plan.contains("QuiverComet"), plan)
    assert(kill.said.forall(what => said(what, "entriesHeld") >= 1), kill)
    // Comet 1.2.0 copies the batches it imports from the JVM (its scan of a broadcast is not
    // marked safe to keep), so once the hash table is built no buffer Quiver lent is out. Should a
    // Comet keep them, this fails, and the hold past the task (LentBuffers) is what gets killed.
    assert(kill.said.forall(what => said(what, "lentBytes") == 0), kill)
    assert(SparkRows.sorted(rows) == expected)
    assertDriverReportConsistent(kill.victim)

    awaitZero("Comet gave back", Seq("broadcast.entriesHeld", "broadcast.bytesHeld"))
    val lent = onEveryExecutor(() => QuiverCometBatchRDD.LendingAllocator.getAllocatedMemory)
    assert(lent.values.forall(_ == 0), s"lent and not given back: $lent")
    destroyBroadcast(frame)
    assertAllFreed("comet")
    assertDriverReportConsistent(kill.victim)
  }
}

/** What the fault test's probe tasks do, in the function Comet leaves to Spark. */
object CometFaultTasks {

  private val stopped = java.util.concurrent.ConcurrentHashMap.newKeySet[Long]()

  /**
   * The first call of each task attempt says what Comet holds of Quiver's lent buffers and what
   * the cache holds, and waits for the suite's go; every call gives `key` back.
   */
  def stopOnce(key: Long, folder: String): Long = {
    if (stopped.add(TaskContext.get().taskAttemptId())) {
      val lent = QuiverCometBatchRDD.LendingAllocator.getAllocatedMemory
      val held = QuiverMetrics.broadcastCache.entriesHeld()
      FaultSignals.signalThenWait(folder, s"lentBytes=$lent entriesHeld=$held")
    }
    key
  }
}
