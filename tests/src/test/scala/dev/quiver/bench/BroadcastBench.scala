package dev.quiver.bench

import java.io.{File, PrintWriter}
import java.nio.charset.StandardCharsets

import dev.quiver.spark.QuiverRuntime
import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.quiver.QuiverConf

/**
 * The main job: what sharing a decoded Arrow broadcast buys, on an embedded local Spark. A build
 * side is broadcast as Spark-codec-compressed Arrow IPC; every probe task reads all of it (the
 * decode a broadcast join's probe task does before it can probe), with sharing off and on in
 * alternating rounds.
 *
 * Options: `--quick`, `--rows N`, `--tasks N`, `--cores N`, `--rounds N`, `--out DIR`.
 */
object BroadcastBench {

  final case class Options(
      rows: Int = 1000000,
      tasks: Int = 32,
      cores: Int = 8,
      rounds: Int = 4,
      warmups: Int = 1,
      out: File = new File("bench-out")
  )

  def parse(args: List[String], o: Options = Options()): Options = args match {
    case Nil => o
    case "--quick" :: rest => parse(rest, o.copy(rows = 20000, tasks = 8, rounds = 1, warmups = 0))
    case "--rows" :: n :: rest => parse(rest, o.copy(rows = n.toInt))
    case "--tasks" :: n :: rest => parse(rest, o.copy(tasks = n.toInt))
    case "--cores" :: n :: rest => parse(rest, o.copy(cores = n.toInt))
    case "--rounds" :: n :: rest => parse(rest, o.copy(rounds = n.toInt))
    case "--out" :: dir :: rest => parse(rest, o.copy(out = new File(dir)))
    case other :: _ => throw new IllegalArgumentException(s"unknown option $other")
  }

  /** One round's measurements. */
  final case class Round(
      share: Boolean,
      wallMillis: Long,
      runMillis: Long,
      cpuMillis: Long,
      slowestMillis: Long,
      decodes: Long,
      checksum: Long
  )

  def main(args: Array[String]): Unit = {
    val options = parse(args.toList)
    QuiverConf.entries
    val spark = SparkSession
      .builder()
      .master(s"local[${options.cores}]")
      .appName("quiver-bench")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.adaptive.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try run(spark, options)
    finally spark.stop()
  }

  private def run(spark: SparkSession, options: Options): Unit = {
    val started = System.nanoTime()
    def progress(what: String): Unit =
      println(f"[${(System.nanoTime() - started) / 1e9}%6.1fs] $what")

    progress(s"broadcasting a ${options.rows}-row build side (d_key, d_long, d_str)")
    val dim = spark
      .range(0, options.rows.toLong, 1, 8)
      .selectExpr("id AS d_key", "id * 7 AS d_long", "concat('dim-value-', id) AS d_str")
    val broadcast = ArrowBroadcast.of(dim)
    progress(
      f"broadcast: ${broadcast.rows} rows, ${broadcast.bytes / 1048576.0}%.1f MiB compressed"
    )

    val listener = new TaskMetricsListener
    spark.sparkContext.addSparkListener(listener)
    val settings = Seq(false, true)
    val warmups = (1 to options.warmups).flatMap(_ => settings)
    warmups.foreach(share => probe(spark, broadcast, options, share, listener))
    val rounds = for {
      round <- 1 to options.rounds
      share <- settings
    } yield {
      progress(s"round $round/${options.rounds}, sharing ${if (share) "on" else "off"}")
      probe(spark, broadcast, options, share, listener)
    }
    val checksums = rounds.map(_.checksum).distinct
    if (checksums.size != 1) {
      throw new IllegalStateException(s"sharing off and on disagree: checksums $checksums")
    }
    val snapshot = QuiverRuntime.broadcastCache.snapshot()
    if (!snapshot.isEmpty) throw new IllegalStateException(s"cache not empty after run: $snapshot")

    val table = report(options, rounds)
    println()
    println(table)
    options.out.mkdirs()
    write(new File(options.out, "results.md"), table)
    write(new File(options.out, "results.csv"), csv(options, rounds))
    progress(s"results in ${options.out.getAbsolutePath}; checksum ${checksums.head}; cache empty")
    broadcast.value.destroy()
  }

  private def probe(
      spark: SparkSession,
      broadcast: ArrowBroadcast,
      options: Options,
      share: Boolean,
      listener: TaskMetricsListener
  ): Round = {
    listener.clear()
    val decodesBefore = decodes()
    val rdd = new ArrowBroadcastRDD(spark.sparkContext, broadcast.value, options.tasks, share)
    val start = System.nanoTime()
    val sums = rdd
      .mapPartitions { batches =>
        var sum = 0L
        batches.foreach { batch =>
          val longs = batch.column(1)
          val strings = batch.column(2)
          var i = 0
          while (i < batch.numRows()) {
            sum += longs.getLong(i) + strings.getUTF8String(i).numBytes()
            i += 1
          }
        }
        Iterator(sum)
      }
      .collect()
    val wall = (System.nanoTime() - start) / 1000000L
    Thread.sleep(200) // task-end events arrive on the listener bus just after the job
    val tasks = listener.finished
    Round(
      share,
      wall,
      tasks.map(_.runMillis).sum,
      tasks.map(_.cpuMillis).sum,
      if (tasks.isEmpty) 0L else tasks.map(_.runMillis).max,
      decodes() - decodesBefore,
      if (sums.distinct.length == 1) sums.head else -1L
    )
  }

  private def decodes(): Long = {
    val c = QuiverRuntime.broadcastCache.counters()
    c.decodes() + c.privateDecodes()
  }

  private def median(values: Seq[Long]): Long = {
    val sorted = values.sorted
    sorted(sorted.size / 2)
  }

  private def report(options: Options, rounds: Seq[Round]): String = {
    val shape = s"${options.rows} rows, ${options.tasks} tasks, local[${options.cores}]"
    val header =
      "| Shape | Sharing | Wall ms | Tasks' run ms | Tasks' CPU ms | Slowest task ms | Decodes |\n" +
        "|---|---|---:|---:|---:|---:|---:|"
    val lines = Seq(false, true).map { share =>
      val rs = rounds.filter(_.share == share)
      s"| $shape | ${if (share) "on" else "off"} | ${median(rs.map(_.wallMillis))} | " +
        s"${median(rs.map(_.runMillis))} | ${median(rs.map(_.cpuMillis))} | " +
        s"${median(rs.map(_.slowestMillis))} | ${median(rs.map(_.decodes))} |"
    }
    (header +: lines).mkString("\n") + s"\n\nMedians of ${options.rounds} round(s) per setting."
  }

  private def csv(options: Options, rounds: Seq[Round]): String =
    ("rows,tasks,cores,share,wall_ms,run_ms,cpu_ms,slowest_ms,decodes" +: rounds.map { r =>
      s"${options.rows},${options.tasks},${options.cores},${r.share},${r.wallMillis}," +
        s"${r.runMillis},${r.cpuMillis},${r.slowestMillis},${r.decodes}"
    }).mkString("\n") + "\n"

  private def write(file: File, text: String): Unit = {
    val out = new PrintWriter(file, StandardCharsets.UTF_8.name())
    try out.write(text)
    finally out.close()
  }
}
