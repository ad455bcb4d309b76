package dev.quiver.bench.tpch

import java.io.File

import dev.quiver.bench.{BenchOptions, CometJoin, ReportText}
import dev.quiver.bench.ReportText.{median, ms, ratio, save}
import dev.quiver.bench.tpch.TpchWorkload.{Broadcasts, Run, Spark}

/**
 * The TPC-H workload's results: a Markdown table per query (medians of the rounds), the totals
 * and ratios, a CSV of every run and an SVG chart of each query's process CPU per setting.
 */
class TpchReport(
    runs: Seq[Run],
    options: BenchOptions,
    cometSkipped: Option[String],
    problems: Seq[String]
) {

  private val Comet = CometJoin.Setting
  private val OnQuiver = CometJoin.OnQuiverSetting

  /** The settings that ran, in their order. */
  val settings: Seq[String] = TpchWorkload.Settings.filter(s => runs.exists(_.setting == s))

  private val queries: Seq[String] = TpchQueries.Names.filter(q => runs.exists(_.query == q))

  /** Each query's runs under a setting merged into their medians. */
  private val medians: Map[(String, String), Run] =
    runs.groupBy(r => (r.query, r.setting)).map { case (key, rs) =>
      key -> rs.head.copy(
        wallMillis = median(rs.map(_.wallMillis)),
        processCpuMillis = median(rs.map(_.processCpuMillis)),
        decodes = median(rs.map(_.decodes)),
        builds = median(rs.map(_.builds))
      )
    }

  private def total(setting: String)(figure: Run => Long): Long =
    queries.flatMap(q => medians.get((q, setting))).map(figure).sum

  private def rounds: Int = runs.map(_.round).distinct.size

  /** The line the run ends on when every query agreed. */
  def agreement: String =
    s"${queries.size} of ${TpchQueries.Names.size} queries equal across " +
      s"${settings.mkString(", ")} in every round"

  def markdown: String = {
    val header =
      "| Query | " + settings.map(s => s"$s wall | $s CPU").mkString(" | ") +
        (if (settings.contains(OnQuiver)) " | Comet on Quiver / Comet CPU" else "") +
        " | Broadcasts (Spark's / Comet's / through Quiver) | Quiver decodes / builds | Rows |"
    val align = "|---|" + settings.map(_ => "---:|---:|").mkString +
      (if (settings.contains(OnQuiver)) "---:|" else "") + "---|---:|---:|"
    val rows = queries.map { q =>
      val of = settings.flatMap(s => medians.get((q, s)))
      val figures = of.map(r => s"${ms(r.wallMillis)} | ${ms(r.processCpuMillis)}").mkString(" | ")
      val onQuiverRatio = for {
        comet <- medians.get((q, Comet))
        onQuiver <- medians.get((q, OnQuiver))
      } yield ratio(onQuiver.processCpuMillis, comet.processCpuMillis)
      val quiver = medians.get((q, OnQuiver)).getOrElse(of.head)
      val plans = settings.flatMap(s => medians.get((q, s))).map(r => describe(r.broadcasts))
      s"| $q | $figures" + onQuiverRatio.fold("")(r => s" | $r") +
        s" | ${plans.mkString("; ")} | ${quiver.decodes} / ${quiver.builds} | ${of.head.rows} |"
    }
    val totals = "| **total** | " + settings
      .map(s => s"${ms(total(s)(_.wallMillis))} | ${ms(total(s)(_.processCpuMillis))}")
      .mkString(" | ") +
      (if (settings.contains(OnQuiver))
         s" | ${ratio(total(OnQuiver)(_.processCpuMillis), total(Comet)(_.processCpuMillis))}"
       else "") + " | | | |"
    ((Seq(
      s"TPC-H at scale ${options.scaleName}: ${queries.size} queries, medians of $rounds round(s) " +
        s"after ${options.warmups} warm-up(s), local[${TpchWorkload.Cores}], " +
        s"${TpchWorkload.ShufflePartitions} shuffle partitions, scans split every " +
        s"${TpchData.splitBytes(options.scale) >> 10} KiB. CPU is the whole process's (every JVM " +
        "and native thread). Broadcasts count the final plan's broadcast exchanges per setting.",
      "",
      header,
      align
    ) ++ rows :+ totals) ++
      Seq("") ++ ratios ++ Seq("") ++
      (if (problems.isEmpty) Seq(agreement + ".") else "Problems:" +: problems.map("- " + _)) ++
      cometSkipped.map(why => s"Comet did not run: $why.").toSeq).mkString("\n")
  }

  private def ratios: Seq[String] = {
    def line(a: String, b: String): Option[String] =
      if (!settings.contains(a) || !settings.contains(b)) None
      else
        Some(
          s"- $a / $b, all queries: process CPU " +
            s"${ratio(total(a)(_.processCpuMillis), total(b)(_.processCpuMillis))}, " +
            s"wall ${ratio(total(a)(_.wallMillis), total(b)(_.wallMillis))}"
        )
    val largest =
      if (!settings.contains(OnQuiver)) Seq.empty
      else {
        val byQuery = queries.flatMap { q =>
          for {
            comet <- medians.get((q, Comet))
            onQuiver <- medians.get((q, OnQuiver))
            if comet.processCpuMillis > 0
          } yield (q, onQuiver.processCpuMillis.toDouble / comet.processCpuMillis)
        }
        val most = byQuery.sortBy { case (_, r) => -math.abs(math.log(r)) }.take(3)
        Seq(
          "- Comet on Quiver / Comet, the queries that differ most in process CPU: " +
            most.map { case (q, r) => f"$q $r%.2f×" }.mkString(", ")
        )
      }
    val decodes = runs.filter(_.setting == OnQuiver)
    val through = decodes.map(_.broadcasts.quiver.toLong).sum
    val decoded =
      if (decodes.isEmpty) Seq.empty
      else
        Seq(
          s"- Comet on Quiver: ${decodes.map(_.decodes).sum} decodes for $through broadcasts " +
            s"read through Quiver over ${decodes.size} query runs (at most one per broadcast on " +
            "the one executor; the run fails otherwise)"
        )
    (Seq(line(Comet, Spark), line(OnQuiver, Comet), line(OnQuiver, Spark)).flatten ++ largest ++
      decoded)
  }

  def csv: String =
    ReportText.csv(
      "scale,query,setting,round,wall_ms,process_cpu_ms,decodes,builds," +
        "spark_broadcasts,comet_broadcasts,quiver_broadcasts,rows",
      runs.map { r =>
        Seq[Any](
          options.scaleName,
          r.query,
          r.setting,
          r.round,
          r.wallMillis,
          r.processCpuMillis,
          r.decodes,
          r.builds,
          r.broadcasts.spark,
          r.broadcasts.comet,
          r.broadcasts.quiver,
          r.rows
        )
      }
    )

  /** Each query's process CPU per setting, each query on its own scale. */
  def svg: String = {
    val colours = Map(Spark -> "#9e9e9e", Comet -> "#ffb300", OnQuiver -> "#8e24aa")
    val bar = 16
    val groupWidth = settings.size * bar + 14
    val (top, area, left) = (70, 180, 30)
    val width = left + math.max(1, queries.size) * groupWidth + 20
    val groups = queries.zipWithIndex.map { case (q, i) =>
      val values = settings.flatMap(s => medians.get((q, s)).map(s -> _.processCpuMillis))
      val max = math.max(1L, values.map(_._2).max)
      val x0 = left + i * groupWidth
      values.zipWithIndex.map { case ((setting, value), j) =>
        val h = math.max(1, (value.toDouble / max * area).round.toInt)
        val x = x0 + j * bar
        s"""<rect x="$x" y="${top + area - h}" width="${bar - 2}" height="$h" """ +
          s"""fill="${colours(setting)}"><title>$q, $setting: $value ms</title></rect>"""
      }.mkString + s"""<text x="${x0 + groupWidth / 2 - 7}" y="${top + area + 16}" """ +
        s"""font-size="11" text-anchor="middle">$q</text>"""
    }
    val legend = settings.zipWithIndex.map { case (s, i) =>
      val x = left + i * 170
      s"""<rect x="$x" y="${top + area + 30}" width="12" height="12" fill="${colours(s)}"/>""" +
        s"""<text x="${x + 18}" y="${top + area + 41}" font-size="12">$s</text>"""
    }
    s"""<svg xmlns="http://www.w3.org/2000/svg" width="$width" height="${top + area + 60}" """ +
      """font-family="sans-serif">""" +
      s"""<text x="20" y="24" font-size="15">TPC-H at scale ${options.scaleName}: process CPU """ +
      s"""per query (median of $rounds), ${settings.mkString(", ")}</text>""" +
      """<text x="20" y="44" font-size="11">Each query on its own scale (its largest bar is """ +
      """full height); lower is better. Hover a bar for its milliseconds.</text>""" +
      groups.mkString + legend.mkString + "</svg>\n"
  }

  def write(dir: File): Unit = {
    save(new File(dir, "tpch.md"), markdown + "\n\n![chart](tpch.svg)\n")
    save(new File(dir, "tpch.csv"), csv)
    save(new File(dir, "tpch.svg"), svg)
  }

  private def describe(b: Broadcasts): String = s"${b.spark} / ${b.comet} / ${b.quiver}"

}
