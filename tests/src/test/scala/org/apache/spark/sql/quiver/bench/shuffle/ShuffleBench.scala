package org.apache.spark.sql.quiver.bench.shuffle

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import dev.quiver.spark.ArrowBatches
import dev.quiver.spark.shuffle.{QuiverShuffle, ShufflePartitioning}
import org.apache.spark.SPARK_VERSION
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.quiver.{QuiverConf, QuiverRuntime}
import org.apache.spark.sql.quiver.shuffle.{MapStage, ShuffleSettings}

/**
 * The hot reduce task of a skewed shuffled join: most rows share one key, so one reduce task reads
 * nearly the whole shuffle. The map side writes the shuffle once (Quiver's exchange, hash
 * partitioned on the key); then, round after round, a job reads only the hot partition with each
 * of the readers over the very same fetched streams: Quiver's block decoder and raw-block
 * iterator, a `Channels.newChannel` reader doing the same work (the baseline), Comet's
 * `CometShuffleBlockIterator` (where Comet is on the class path) and the no-copy floor (each body
 * read straight into a heap array, nothing more).
 *
 * Options: `--rows N` (2097152), `--maps N` input partitions (16), `--partitions N` reduce
 * partitions (16), `--batch-rows N` rows per input batch (8192), `--rounds N` measured rounds (5),
 * `--spark-compress` (let Spark compress the shuffle; Quiver then writes uncompressed blocks),
 * `--quick`, `--out DIR`.
 */
object ShuffleBench {

  final case class Options(
      rows: Long = 2097152L,
      maps: Int = 16,
      partitions: Int = 16,
      batchRows: Int = 8192,
      rounds: Int = 5,
      sparkCompress: Boolean = false,
      out: File = new File("bench-out")
  )

  def parse(args: List[String], o: Options = Options()): Options = args match {
    case Nil => o
    case "--quick" :: rest => parse(rest, o.copy(rows = 131072L, rounds = 2))
    case "--rows" :: n :: rest => parse(rest, o.copy(rows = n.toLong))
    case "--maps" :: n :: rest => parse(rest, o.copy(maps = n.toInt))
    case "--partitions" :: n :: rest => parse(rest, o.copy(partitions = n.toInt))
    case "--batch-rows" :: n :: rest => parse(rest, o.copy(batchRows = n.toInt))
    case "--rounds" :: n :: rest => parse(rest, o.copy(rounds = n.toInt))
    case "--spark-compress" :: rest => parse(rest, o.copy(sparkCompress = true))
    case "--out" :: dir :: rest => parse(rest, o.copy(out = new File(dir)))
    case other :: _ => throw new IllegalArgumentException(s"unknown option $other")
  }

  /** The skewed table: 1 key, 100 flat columns, 3 nested; 95% of rows on key 0. */
  def skewedTable(spark: SparkSession, rows: Long, maps: Int): DataFrame = {
    def mix(c: Int) = s"((id * 2654435761 + $c * 40503) % 1000003)"
    val flat = (0 until 100).map {
      case c if c < 40 => s"${mix(c)} AS l$c"
      case c if c < 70 => s"CAST(${mix(c)} AS DOUBLE) / 100 AS d$c"
      case c if c < 90 => s"CAST(${mix(c)} % 100000 AS INT) AS i$c"
      case c => s"concat('v', ${mix(c)} % 100000) AS s$c"
    }
    val nested = Seq(
      s"named_struct('a', CAST(${mix(100)} AS INT), 'b', concat('n', id % 1000)) AS st",
      s"slice(array(id, ${mix(101)}, ${mix(102)}), 1, CAST(id % 4 AS INT)) AS arr",
      "named_struct('c', slice(array(CAST(id % 7 AS INT), CAST(id % 11 AS INT)), 1, " +
        s"CAST(id % 3 AS INT)), 'd', CAST(${mix(103)} AS DOUBLE)) AS st2"
    )
    spark
      .range(0, rows, 1, maps)
      .selectExpr(Seq("CASE WHEN id % 20 = 0 THEN id ELSE 0 END AS key") ++ flat ++ nested: _*)
  }

  def main(args: Array[String]): Unit = {
    val options = parse(args.toList)
    QuiverConf.register()
    val spark = SparkSession
      .builder()
      .master("local[2]")
      .appName("quiver-shuffle-bench")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.adaptive.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.shuffle.compress", options.sparkCompress.toString)
      .getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try run(spark, options)
    finally spark.stop()
  }

  private def run(spark: SparkSession, options: Options): Unit = {
    val started = System.nanoTime()
    def progress(what: String): Unit =
      println(f"[${(System.nanoTime() - started) / 1e9}%6.1fs] $what")
    val sc = spark.sparkContext

    val table = skewedTable(spark, options.rows, options.maps)
    val exchange = QuiverShuffle.exchange(
      ArrowBatches.of(table, options.batchRows),
      table.schema,
      ShufflePartitioning.hash(options.partitions, "key")
    )
    progress(
      s"map side: ${options.rows} rows x ${table.schema.size} columns in ${options.maps} " +
        s"map tasks, ${exchange.blockCodec} blocks, spark.shuffle.compress=${options.sparkCompress}"
    )
    val statistics = MapStage.run(sc, exchange.dependency)
    val bytes = statistics.bytesByPartitionId
    val hot = bytes.indices.maxBy(i => bytes(i))
    progress(
      f"shuffle written: ${bytes.sum / 1048576.0}%.1f MiB; hot partition $hot: " +
        f"${bytes(hot) / 1048576.0}%.1f MiB (${100.0 * bytes(hot) / bytes.sum}%.1f%%)"
    )

    val settings = ShuffleSettings.fromSession(sc)
    val readers = Reader.all.map { reader =>
      reader -> new HotTaskRead(exchange.dependency, settings, exchange.metrics, reader)
    }.toMap
    def readHot(reader: Reader): ReadResult =
      sc.runJob(readers(reader), (it: Iterator[ReadResult]) => it.next(), Seq(hot)).head

    val results = Seq.newBuilder[ReadResult]
    (0 to options.rounds).foreach { round =>
      // Alternate the order, so that no reader always runs right after the same other one.
      val order = if (round % 2 == 0) Reader.all else Reader.all.reverse
      order.foreach { reader =>
        val result = readHot(reader)
        if (round > 0) results += result
        progress(
          f"${if (round == 0) "warm-up" else s"round $round"}%-8s ${reader.name}%-40s " +
            f"${result.wallNanos / 1e6}%8.1f ms wall ${result.cpuNanos / 1e6}%8.1f ms CPU " +
            s"${result.blocks} blocks ${result.availableCalls} available()"
        )
      }
    }
    assert(QuiverRuntime.allocator.getAllocatedMemory == 0, "the readers leaked Arrow memory")
    val report =
      ShuffleBenchReport(options, table.schema.size, bytes.sum, bytes(hot), results.result())
    options.out.mkdirs()
    val file = new File(options.out, "shuffle-results.md")
    Files.write(file.toPath, report.markdown.getBytes(StandardCharsets.UTF_8))
    println()
    println(report.markdown)
    progress(s"written to $file")
  }
}

/** The medians of the measured rounds and their ratios, as Markdown. */
final case class ShuffleBenchReport(
    options: ShuffleBench.Options,
    columns: Int,
    shuffleBytes: Long,
    hotBytes: Long,
    results: Seq[ReadResult]
) {

  private def median(values: Seq[Long]): Double = {
    val sorted = values.sorted
    val n = sorted.size
    if (n % 2 == 1) sorted(n / 2).toDouble else (sorted(n / 2 - 1) + sorted(n / 2)) / 2.0
  }

  private def of(reader: Reader) = results.filter(_.reader == reader)

  private def wall(reader: Reader) = median(of(reader).map(_.wallNanos)) / 1e6

  private def cpu(reader: Reader) = median(of(reader).map(_.cpuNanos)) / 1e6

  def markdown: String = {
    val runtime = ManagementFactory.getRuntimeMXBean
    val lines = Seq.newBuilder[String]
    lines += s"Spark $SPARK_VERSION, ${runtime.getVmName} ${runtime.getVmVersion}, " +
      s"${Runtime.getRuntime.availableProcessors()} cores; ${options.rows} rows x $columns " +
      s"columns, ${options.maps} map tasks, ${options.partitions} reduce partitions, " +
      s"spark.shuffle.compress=${options.sparkCompress}; shuffle " +
      f"${shuffleBytes / 1048576.0}%.1f MiB, hot partition ${hotBytes / 1048576.0}%.1f MiB; " +
      s"median of ${options.rounds} rounds."
    lines += ""
    lines += "| path | reader | wall ms | CPU ms | blocks | available() calls | read calls |"
    lines += "|---|---|---:|---:|---:|---:|---:|"
    Reader.all.foreach { reader =>
      val first = of(reader).head
      lines += f"| ${if (reader.decodes) "decoding" else "raw-block"} | ${reader.name} | " +
        f"${wall(reader)}%.1f | ${cpu(reader)}%.1f | ${first.blocks} | " +
        s"${first.availableCalls} | ${first.reads} |"
    }
    lines += ""
    lines += "| path | Quiver / Channels.newChannel, wall | same, CPU |"
    lines += "|---|---:|---:|"
    Seq(
      ("decoding", Reader.QuiverDecode, Reader.ChannelDecode),
      ("raw-block", Reader.QuiverRaw, Reader.ChannelRaw)
    ).foreach { case (path, quiver, channel) =>
      lines += f"| $path | ${wall(quiver) / wall(channel)}%.3f | ${cpu(quiver) / cpu(channel)}%.3f |"
    }
    lines += ""
    lines += "| raw-block reader / no-copy floor | wall | CPU |"
    lines += "|---|---:|---:|"
    Reader.all.filter(r => !r.decodes && r != Reader.Floor).foreach { reader =>
      lines += f"| ${reader.name} | ${wall(reader) / wall(Reader.Floor)}%.3f | " +
        f"${cpu(reader) / cpu(Reader.Floor)}%.3f |"
    }
    lines.result().mkString("\n") + "\n"
  }
}
