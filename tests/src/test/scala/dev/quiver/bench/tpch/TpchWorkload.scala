package dev.quiver.bench.tpch

import scala.collection.mutable.ArrayBuffer

import dev.quiver.bench.{BenchOptions, BroadcastJoinBench, CometJoin, ProcessCpu}
import dev.quiver.spark.{QuiverMetrics, QuiverSettings}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.exchange.BroadcastExchangeLike

/**
 * `dev/bench --workload tpch`: TPC-H's 22 queries under Spark, Comet 1.2.0 and Comet on Quiver in
 * one SparkSession, every query's rows compared across the settings in every round.
 *
 * The session has Quiver's Comet extensions (which apply Comet's), Quiver's and Comet's plugins,
 * Comet's shuffle manager and off-heap memory, as a Comet deployment on Quiver would; each query
 * then runs under each setting by session settings alone: `spark.comet.enabled` off is Spark's
 * own plan, on with `spark.quiver.comet.broadcast.enabled` off is Comet's, on with both is Comet
 * reading its broadcasts through Quiver's cache. The settings' order rotates per query and round,
 * so that none always runs first (warm file caches, JIT). Where Comet cannot run (a build without
 * its jar, a machine without its native library) the workload runs Spark alone and says why.
 */
object TpchWorkload {

  val Spark = "Spark"

  val Settings: Seq[String] = Seq(Spark, CometJoin.Setting, CometJoin.OnQuiverSetting)

  /** `local[Cores]`: more task slots than the 2-core machines this runs on, as executors have. */
  val Cores = 4

  /** Shuffle partitions: Spark's 200 would be mostly empty tasks at these scales. */
  val ShufflePartitions = 16

  private val CometEnabled = "spark.comet.enabled"
  private val QuiverCometEnabled = "spark.quiver.comet.broadcast.enabled"

  /** The broadcast exchanges of a query's final plan, by who reads them on the executors. */
  final case class Broadcasts(spark: Int, comet: Int, quiver: Int) {
    def total: Int = spark + comet + quiver
  }

  /** One query under one setting in one round. */
  final case class Run(
      query: String,
      setting: String,
      round: Int,
      wallMillis: Long,
      processCpuMillis: Long,
      decodes: Long,
      builds: Long,
      broadcasts: Broadcasts,
      rows: Int
  )

  /** What a run found wrong: rows that differ, or more decodes than broadcasts through Quiver. */
  final class WorkloadFailure(message: String) extends IllegalStateException(message)

  def run(options: BenchOptions, log: String => Unit): Unit = {
    val cometSkipped = CometJoin.unavailable(None)
    cometSkipped.foreach(why => log(s"tpch: Comet did not run: $why"))
    val settings = if (cometSkipped.isEmpty) Settings else Seq(Spark)
    val spark = session(options.scale, withComet = cometSkipped.isEmpty)
    val problems = ArrayBuffer[String]()
    val runs =
      try {
        spark.conf.set(CometEnabled, "false")
        val tables = TpchData.prepare(spark, options.scale, options.data, log)
        tables.foreach { case (name, dir) =>
          spark.read.parquet(dir.getPath).createOrReplaceTempView(name)
        }
        val queries = TpchQueries.all
        val total = options.warmups + options.rounds
        (1 to total).flatMap { round =>
          val measured = round > options.warmups
          val label =
            if (measured) s"round ${round - options.warmups}/${options.rounds}"
            else s"warm-up $round/${options.warmups}"
          queries.zipWithIndex.flatMap { case (query, index) =>
            val order = settings.indices.map(i => settings((i + index + round) % settings.size))
            val results = order.map { setting =>
              log(s"tpch sf${options.scaleName}: $label, ${query.name}, $setting")
              runOnce(spark, query, setting, round - options.warmups)
            }
            problems ++= check(query.name, label, results)
            if (measured) results.map(_._1) else Seq.empty
          }
        }
      } finally {
        spark.stop()
        val snapshot = QuiverMetrics.broadcastCacheEntries
        if (!snapshot.isEmpty) throw new IllegalStateException(s"the cache still holds $snapshot")
      }
    val report = new TpchReport(runs, options, cometSkipped, problems.toSeq)
    options.out.mkdirs()
    report.write(options.out)
    println()
    println(report.markdown)
    if (problems.nonEmpty) {
      throw new WorkloadFailure(
        s"${problems.size} problem(s) in the TPC-H run:\n${problems.mkString("\n")}"
      )
    }
    log(report.agreement)
  }

  /**
   * What one query's settings got wrong in one round: Comet and Comet on Quiver must agree
   * exactly, Spark with each to [[RowComparison.FloatTolerance]]; Comet on Quiver must decode
   * each broadcast it reads at most once (one executor here), and the others decode none.
   */
  private[tpch] def check(
      query: String,
      label: String,
      results: Seq[(Run, Seq[Row])]
  ): Seq[String] = {
    val bySetting = results.map { case (run, rows) => run.setting -> rows }.toMap
    val pairs = Seq(
      (CometJoin.Setting, CometJoin.OnQuiverSetting, true),
      (Spark, CometJoin.Setting, false),
      (Spark, CometJoin.OnQuiverSetting, false)
    )
    val differences = pairs.flatMap { case (a, b, exact) =>
      for {
        left <- bySetting.get(a)
        right <- bySetting.get(b)
        difference <- RowComparison.difference(left, right, exact)
      } yield s"$query, $label: $a and $b differ: $difference"
    }
    val decodes = results.map(_._1).flatMap { run =>
      val allowed = if (run.setting == CometJoin.OnQuiverSetting) run.broadcasts.quiver else 0
      if (run.decodes <= allowed) None
      else
        Some(
          s"$query, $label, ${run.setting}: ${run.decodes} decodes for ${run.broadcasts.quiver} " +
            "broadcasts through Quiver"
        )
    }
    differences ++ decodes
  }

  private def runOnce(
      spark: SparkSession,
      query: TpchQueries.Query,
      setting: String,
      round: Int
  ): (Run, Seq[Row]) = {
    spark.conf.set(CometEnabled, (setting != Spark).toString)
    spark.conf.set(QuiverCometEnabled, (setting == CometJoin.OnQuiverSetting).toString)
    val counters = QuiverMetrics.broadcastCache
    val decodesBefore = counters.decodes() + counters.privateDecodes()
    val buildsBefore = counters.derivedBuilds()
    val cpuBefore = ProcessCpu.nanos()
    val start = System.nanoTime()
    val frame = spark.sql(query.sql)
    val rows = frame.collect().toSeq
    val wall = (System.nanoTime() - start) / 1000000L
    val cpu = (ProcessCpu.nanos() - cpuBefore) / 1000000L
    val run = Run(
      query.name,
      setting,
      round,
      wall,
      cpu,
      counters.decodes() + counters.privateDecodes() - decodesBefore,
      counters.derivedBuilds() - buildsBefore,
      broadcasts(frame.queryExecution.executedPlan),
      rows.size
    )
    (run, rows)
  }

  /** The final plan's broadcast exchanges, subqueries' and AQE's query stages' included. */
  private[tpch] def broadcasts(plan: SparkPlan): Broadcasts = {
    val names = PlanWalk.broadcastExchanges(plan).map(_.getClass.getSimpleName)
    Broadcasts(
      spark = names.count(n => !n.startsWith("Comet") && !n.startsWith("QuiverComet")),
      comet = names.count(_.startsWith("Comet")),
      quiver = names.count(_.startsWith("QuiverComet"))
    )
  }

  private object PlanWalk extends AdaptiveSparkPlanHelper {

    def broadcastExchanges(plan: SparkPlan): Seq[SparkPlan] =
      collectWithSubqueries(plan) { case exchange: BroadcastExchangeLike => exchange }
  }

  private def session(scale: Double, withComet: Boolean): SparkSession = {
    val builder = SparkSession
      .builder()
      .master(s"local[$Cores]")
      .appName("quiver-bench-tpch")
      .config("spark.local.dir", BroadcastJoinBench.localDir.toString)
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", ShufflePartitions.toString)
      .config("spark.sql.files.maxPartitionBytes", TpchData.splitBytes(scale).toString)
      .config(QuiverSettings.RetainDecodedBroadcasts, "true")
    if (withComet) {
      CometJoin.sessionConfig.foreach { case (key, value) => builder.config(key, value) }
      builder
        .config("spark.sql.extensions", CometJoin.ExtensionsOnQuiver)
        .config("spark.plugins", s"${QuiverSettings.Plugin},${CometJoin.Plugin}")
        .config("spark.shuffle.manager", CometJoin.ShuffleManager)
        .config("spark.comet.exec.shuffle.enabled", "true")
    } else builder.config("spark.plugins", QuiverSettings.Plugin)
    val spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark
  }
}
