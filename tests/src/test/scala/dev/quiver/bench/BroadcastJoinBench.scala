package dev.quiver.bench

import dev.quiver.spark.{QuiverMetrics, QuiverSettings}
import dev.quiver.bench.tpch.TpchWorkload
import dev.quiver.spark.join.QuiverJoins
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, length, sum}
import org.apache.spark.sql.quiver.bench.ListenerBus
import org.apache.spark.sql.quiver.cluster.StandaloneCluster

/**
 * The main job (`dev/bench`): what sharing the decoded broadcast buys a broadcast hash join, on an
 * embedded local Spark.
 *
 * For each shape it runs `SELECT sum(f.f_long), sum(d.d_long), sum(length(f.f_str)),
 * sum(length(d.d_str)) FROM fact f JOIN dim d ON f.key = d.k` three ways in every round: Spark's
 * own broadcast hash join (the reference an engine user would otherwise have), and Quiver's
 * broadcast hash join with `spark.quiver.broadcast.shareDecoded.enabled` off and on. Then, in a
 * SparkContext of its own (retention is fixed per executor), the same rounds with sharing on and
 * `spark.quiver.broadcast.retain.enabled`: "on+retain". It reports medians of wall time, the probe
 * stage's summed task run and CPU time, its slowest task, the decodes the cache did and the build
 * sides it derived (Quiver's join tables), the largest entry its cache keeps after the query (with
 * retention: a decoded copy and its table), and the whole JVM's CPU time over the query (driver and
 * executor threads, GC and JIT: Spark builds and serializes its relation on the driver); and fails
 * if the settings disagree on the sums. Where this build and machine can run it, Comet 1.2.0 then
 * runs the same SQL query with its native broadcast hash join, in a SparkContext of its own too
 * ([[CometJoin]]): "Comet". Each SparkContext but Comet's then runs the read-path section
 * ([[ReadPathBench]]): the broadcast read by every task, Quiver's reader against Comet 1.2.0's.
 */
object BroadcastJoinBench {

  /** Sharing on, with retention: run in its own SparkContext, after the others. */
  val Retained = "on+retain"

  val Settings: Seq[String] =
    Seq("Spark", "off", "on", Retained, CometJoin.Setting, CometJoin.OnQuiverSetting)

  /** Comet's settings: its own broadcast read, and its read through Quiver's cache. */
  val CometSettings: Seq[String] = Seq(CometJoin.Setting, CometJoin.OnQuiverSetting)

  /** The query of every setting; Spark's own join and Comet's run it as SQL. */
  val Query: String =
    "SELECT /*+ BROADCAST(d) */ sum(f.f_long), sum(d.d_long), sum(length(f.f_str)), " +
      "sum(length(d.d_str)) FROM fact f JOIN dim d ON f.key = d.k"

  /** The settings that run side by side in one SparkContext, in rotating order. */
  private val SideBySide = Seq("Spark", "off", "on")

  /** One query run. */
  final case class Run(
      shape: Shape,
      setting: String,
      round: Int,
      wallMillis: Long,
      runMillis: Long,
      cpuMillis: Long,
      slowestMillis: Long,
      decodes: Long,
      builds: Long,
      processCpuMillis: Long,
      bytesKept: Long,
      sums: Seq[Long],
      perExecutor: Map[String, ExecutorCounts] = Map.empty
  ) extends ReportText.ShapeRun

  /** On a cluster: what one executor decoded and built during a query. */
  final case class ExecutorCounts(decodes: Long, builds: Long)

  def main(args: Array[String]): Unit = {
    val options = BenchOptions.parse(args.toSeq)
    val started = System.nanoTime()
    def log(what: String): Unit = println(f"[${(System.nanoTime() - started) / 1e9}%7.1fs] $what")
    if (options.workload == BenchOptions.TpchWorkload) TpchWorkload.run(options, log)
    else runJoinWorkload(options, log)
    log(s"results in ${options.out.getAbsolutePath}")
  }

  /** The synthetic join's shapes: the join section, then the read-path section. */
  private def runJoinWorkload(options: BenchOptions, log: String => Unit): Unit = {
    options.scaledNote.foreach(note => log(s"shapes $note"))
    val peer = PeerBroadcastReader.comet()
    peer.left.foreach(why => log(s"read path: $why"))
    // Comet's native library is loaded before either section runs, as Comet's own session loads
    // it: its reader then runs as deployed (its Arrow's checks off) in the read section too.
    val cometSkipped = CometJoin.unavailable(options.master)
    if (options.runs("join")) cometSkipped.foreach(why => log(s"join: Comet did not run: $why"))
    if (options.runs("read") && peer.isRight) {
      cometSkipped.foreach(why => log(s"read path: Comet's reader runs without its library: $why"))
    }
    val withComet = options.runs("join") && cometSkipped.isEmpty
    val results =
      options.shapes.map(shape => runShape(shape, options, peer.toOption, withComet, log))
    val runs = results.flatMap(_._1)
    val report = new BenchReport(runs, options, cometSkipped)
    val reads = new ReadPathReport(results.flatMap(_._2), options, peer.left.toOption)
    options.out.mkdirs()
    if (options.runs("join")) {
      report.write(options.out)
      println()
      println(report.markdown)
      val ran = Settings.filter(s => runs.exists(_.setting == s))
      log(s"sums agree across ${ran.init.mkString(", ")} and ${ran.last} in every round")
    }
    if (options.runs("read")) {
      reads.write(options.out)
      println()
      println(reads.markdown)
      log("rows and sums agree across the readers in every round")
    }
  }

  private def runShape(
      shape: Shape,
      options: BenchOptions,
      peer: Option[PeerBroadcastReader],
      withComet: Boolean,
      log: String => Unit
  ): (Seq[Run], Seq[ReadPathBench.ReadRun]) = {
    val (sideBySide, reads) = runSession(shape, options, peer, log, SideBySide, retain = false)
    val (retained, retainedReads) =
      runSession(shape, options, peer, log, Seq(Retained), retain = true)
    // Comet alone, then Comet on Quiver (with retention, as deployed): each in a SparkContext of
    // its own, since Comet's extensions and Quiver's retention are fixed per context.
    val comet =
      if (!withComet) Seq.empty
      else
        CometSettings.flatMap { setting =>
          val onQuiver = setting == CometJoin.OnQuiverSetting
          runSession(shape, options, None, log, Seq(setting), retain = onQuiver, comet = true)._1
        }
    val sums = (sideBySide ++ retained ++ comet).map(_.sums).distinct
    if (sums.size > 1) {
      throw new IllegalStateException(
        s"${shape.name}: on+retain or Comet disagrees: ${sums.mkString("; ")}"
      )
    }
    val readSums = (reads ++ retainedReads).map(r => (r.rows, r.sum)).distinct
    if (readSums.size > 1) {
      throw new IllegalStateException(s"${shape.name}: read path on+retain disagrees: $readSums")
    }
    (sideBySide ++ retained ++ comet, reads ++ retainedReads)
  }

  /**
   * The join section's rounds of `settings` in one SparkContext, then the read path's (but in
   * Comet's SparkContext, which runs the join alone).
   */
  private def runSession(
      shape: Shape,
      options: BenchOptions,
      peer: Option[PeerBroadcastReader],
      log: String => Unit,
      settings: Seq[String],
      retain: Boolean,
      comet: Boolean = false
  ): (Seq[Run], Seq[ReadPathBench.ReadRun]) = {
    val onQuiver = settings.contains(CometJoin.OnQuiverSetting)
    val spark = session(shape.cores, retain, options.master, comet, onQuiver)
    val executors = options.master.map(_ => new ExecutorFigures(spark.sparkContext))
    try {
      val tables = BenchData.prepare(spark, shape, options.data, log)
      val listener = new TaskMetricsListener
      spark.sparkContext.addSparkListener(listener)
      val fact = spark.read.parquet(tables.fact.getPath)
      val dim = spark.read.parquet(tables.dim.getPath)
      require(
        fact.rdd.getNumPartitions == shape.probeTasks,
        s"expected ${shape.probeTasks} probe partitions, Spark planned ${fact.rdd.getNumPartitions}"
      )
      fact.createOrReplaceTempView("fact")
      dim.createOrReplaceTempView("dim")
      val total = options.warmups + options.rounds
      val joins =
        if (!options.runs("join")) Seq.empty
        else
          (1 to total).flatMap { round =>
            val measured = round > options.warmups
            val label =
              if (measured) s"round ${round - options.warmups}/${options.rounds}"
              else s"warm-up $round/${options.warmups}"
            // Rotate the order each round so that no setting always runs first (warm caches, JIT).
            val order = settings.indices.map(i => settings((i + round) % settings.size))
            val runs = order.map { setting =>
              log(s"${shape.name}: $label, $setting")
              runOnce(
                spark,
                shape,
                setting,
                round - options.warmups,
                fact,
                dim,
                listener,
                executors
              )
            }
            val distinct = runs.map(_.sums).distinct
            if (distinct.size != 1) {
              throw new IllegalStateException(
                s"${shape.name} $label: the settings disagree: " +
                  runs.map(r => s"${r.setting} ${r.sums.mkString(",")}").mkString("; ")
              )
            }
            if (measured) runs else Seq.empty
          }
      val reads =
        if (!options.runs("read") || comet) Seq.empty
        else
          ReadPathBench.run(
            spark,
            shape,
            tables.dim.getPath,
            peer,
            ReadPathBench.settings(peer, retain),
            options,
            listener,
            log
          )
      (joins, reads)
    } finally {
      spark.stop()
      val snapshot = QuiverMetrics.broadcastCacheEntries
      if (!snapshot.isEmpty) throw new IllegalStateException(s"the cache still holds $snapshot")
    }
  }

  private def runOnce(
      spark: SparkSession,
      shape: Shape,
      setting: String,
      round: Int,
      fact: DataFrame,
      dim: DataFrame,
      listener: TaskMetricsListener,
      executors: Option[ExecutorFigures]
  ): Run = {
    val counters = QuiverMetrics.broadcastCache
    val decodesBefore = counters.decodes() + counters.privateDecodes()
    val buildsBefore = counters.derivedBuilds()
    val executorsBefore = executors.map(_.now())
    listener.clear()
    val cpuBefore = ProcessCpu.nanos()
    val start = System.nanoTime()
    val row = setting match {
      case "Spark" => spark.sql(Query).head()
      case CometJoin.Setting | CometJoin.OnQuiverSetting =>
        // collect() runs this very plan (head() would plan a limit over it).
        val query = spark.sql(Query)
        CometJoin.requireNativeJoin(query, throughQuiver = setting == CometJoin.OnQuiverSetting)
        query.collect().head
      case share =>
        spark.conf.set(QuiverSettings.ShareDecodedBroadcasts, share != "off")
        QuiverJoins
          .broadcastHashJoin(fact, dim, Seq("key"), Seq("k"), "inner")
          .agg(
            sum(col("f_long")),
            sum(col("d_long")),
            sum(length(col("f_str"))),
            sum(length(col("d_str")))
          )
          .head()
    }
    val wall = (System.nanoTime() - start) / 1000000L
    ListenerBus.drain(spark.sparkContext)
    val processCpu = (ProcessCpu.nanos() - cpuBefore) / 1000000L
    val probe = listener.probeStage(shape.probeTasks)
    // On a cluster the executors decode and build; the driver (these counters) too, once.
    val perExecutor = executors.fold(Map.empty[String, ExecutorCounts]) { figures =>
      figures.growthSince(executorsBefore.getOrElse(Map.empty))
    }
    Run(
      shape,
      setting,
      round,
      wall,
      probe.map(_.runMillis).sum,
      probe.map(_.cpuNanos).sum / 1000000L,
      if (probe.isEmpty) 0L else probe.map(_.runMillis).max,
      counters.decodes() + counters.privateDecodes() - decodesBefore +
        perExecutor.values.map(_.decodes).sum,
      counters.derivedBuilds() - buildsBefore + perExecutor.values.map(_.builds).sum,
      processCpu,
      largestEntryBytes(),
      sums(row),
      perExecutor
    )
  }

  /**
   * The largest entry the cache keeps after the query: with retention, one broadcast's decoded
   * copy and its table, what every task of a query reads. (Earlier queries' broadcasts stay
   * retained beside it until Spark drops them.)
   */
  private def largestEntryBytes(): Long = {
    var largest = 0L
    QuiverMetrics.broadcastCacheEntries
      .entries()
      .forEach(e => largest = math.max(largest, e.bytes()))
    largest
  }

  private def sums(row: Row): Seq[Long] = (0 until row.length).map(i => row.getLong(i))

  /**
   * Spark's local directory for the embedded runs (shuffle files): in memory (`/dev/shm`) where the
   * machine has it. On a disk's file system, creating a file costs more the more files were deleted
   * shortly before (ext4 looks past recently freed inodes), so each SparkContext's shuffle files
   * cost more than the one's before it, and the settings that run last (Comet on Quiver, after
   * Comet) paid for those that ran first: 1.08× Comet's probe CPU at the full 1M × 128 shape in
   * that order, 0.92× in the other.
   */
  private[bench] lazy val localDir: java.nio.file.Path = {
    val memory = new java.io.File("/dev/shm")
    val dir =
      if (memory.isDirectory && memory.canWrite)
        java.nio.file.Files.createTempDirectory(memory.toPath, "quiver-bench-")
      else java.nio.file.Files.createTempDirectory("quiver-bench-")
    sys.addShutdownHook(org.apache.commons.io.FileUtils.deleteQuietly(dir.toFile))
    dir
  }

  private def session(
      cores: Int,
      retain: Boolean,
      master: Option[String],
      comet: Boolean,
      onQuiver: Boolean
  ): SparkSession = {
    val builder = SparkSession.builder()
    master match {
      case Some(url) =>
        // The executors get the jars from the cluster's home; Quiver's and the bench's classes
        // from this class path's folders (dev/cluster runs from the same build).
        // Two-core executors: as many executor JVMs as the cluster has room for.
        builder
          .master(url)
          .config("spark.executor.extraClassPath", StandaloneCluster.classDirectories.mkString(":"))
          .config("spark.executor.cores", "2")
          .config("spark.driver.bindAddress", "127.0.0.1")
      case None => builder.master(s"local[$cores]").config("spark.local.dir", localDir.toString)
    }
    if (comet) CometJoin.sessionConfig.foreach { case (key, value) => builder.config(key, value) }
    if (onQuiver) builder.config("spark.sql.extensions", CometJoin.ExtensionsOnQuiver)
    val spark = builder
      .appName("quiver-bench")
      .config("spark.plugins", QuiverSettings.Plugin)
      .config(QuiverSettings.RetainDecodedBroadcasts, retain.toString)
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.adaptive.enabled", "false")
      // One partition per probe file: a file's open cost alone exceeds a partition's budget.
      .config("spark.sql.files.openCostInBytes", (1L << 30).toString)
      .config("spark.sql.autoBroadcastJoinThreshold", "-1")
      .getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark
  }
}
