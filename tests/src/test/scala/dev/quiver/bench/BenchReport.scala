package dev.quiver.bench

import java.io.File

import dev.quiver.bench.BroadcastJoinBench.Run
import dev.quiver.bench.ReportText.{median, ms, ratio, save, Medians}

/**
 * The main job's results: a Markdown table, a CSV of every run, and an SVG chart. `cometSkipped`
 * says why the Comet setting did not run, if it did not.
 */
class BenchReport(runs: Seq[Run], options: BenchOptions, cometSkipped: Option[String] = None) {

  private val Comet = CometJoin.Setting

  private val OnQuiver = CometJoin.OnQuiverSetting

  /** Quiver's settings, as the ratios list them. */
  private val Quiver = Seq("off", "on", BroadcastJoinBench.Retained)

  private val medians = new Medians(runs, options)(rs =>
    rs.head.copy(
      wallMillis = median(rs.map(_.wallMillis)),
      runMillis = median(rs.map(_.runMillis)),
      cpuMillis = median(rs.map(_.cpuMillis)),
      slowestMillis = median(rs.map(_.slowestMillis)),
      decodes = median(rs.map(_.decodes)),
      builds = median(rs.map(_.builds)),
      processCpuMillis = median(rs.map(_.processCpuMillis)),
      bytesKept = median(rs.map(_.bytesKept))
    )
  )

  private val shapes: Seq[Shape] = medians.shapes

  def markdown: String = {
    val rows = medians.rows(BroadcastJoinBench.Settings) { (shape, setting, m) =>
      val (decodes, builds, kept) =
        if (setting == "Spark" || setting == Comet) ("–", "–", "–")
        else (m.decodes.toString, m.builds.toString, mib(m.bytesKept))
      s"| ${shape.name} | $setting | ${ms(m.wallMillis)} | ${ms(m.runMillis)} | ${ms(m.cpuMillis)} | " +
        s"${ms(m.slowestMillis)} | ${ms(m.processCpuMillis)} | $decodes | $builds | $kept |"
    }
    val ratios = shapes.flatMap { shape =>
      for {
        off <- medians(shape, "off")
        on <- medians(shape, "on")
      } yield s"- ${shape.name}: probe tasks' CPU off/on = ${ratio(off.cpuMillis, on.cpuMillis)}, " +
        s"wall off/on = ${ratio(off.wallMillis, on.wallMillis)}" +
        medians(shape, BroadcastJoinBench.Retained).fold("") { retained =>
          s"; CPU on/on+retain = ${ratio(on.cpuMillis, retained.cpuMillis)}"
        }
    }
    def against(peer: String): Seq[String] = shapes.flatMap { shape =>
      medians(shape, peer).toSeq.flatMap { p =>
        Quiver.flatMap(s => medians(shape, s)).map { q =>
          s"- ${shape.name}, ${q.setting}: probe tasks' CPU ${ratio(q.cpuMillis, p.cpuMillis)}, " +
            s"process CPU ${ratio(q.processCpuMillis, p.processCpuMillis)}, " +
            s"wall ${ratio(q.wallMillis, p.wallMillis)}"
        }
      }
    }
    val againstComet = against(Comet)
    val cometOnQuiver = shapes.flatMap { shape =>
      for {
        comet <- medians(shape, Comet)
        onQuiver <- medians(shape, OnQuiver)
      } yield s"- ${shape.name}: probe tasks' CPU ${ratio(onQuiver.cpuMillis, comet.cpuMillis)}, " +
        s"process CPU ${ratio(onQuiver.processCpuMillis, comet.processCpuMillis)}, " +
        s"wall ${ratio(onQuiver.wallMillis, comet.wallMillis)}; decodes per query " +
        s"${onQuiver.decodes} (one per executor: every query broadcasts anew)"
    }
    val perExecutor = for {
      shape <- shapes
      setting <- Quiver
      rs = runs.filter(r => r.shape == shape && r.setting == setting)
      executors = rs.flatMap(_.perExecutor.keys).distinct.sorted
      if executors.nonEmpty
    } yield {
      val counts = executors.map { id =>
        val of = rs.map(_.perExecutor.getOrElse(id, BroadcastJoinBench.ExecutorCounts(0, 0)))
        s"executor $id ${median(of.map(_.decodes))} / ${median(of.map(_.builds))}"
      }
      s"- ${shape.name}, $setting: ${counts.mkString(", ")}"
    }
    val rounds = medians.rounds
    (Seq(
      "| Shape | Setting (Spark / off / on / on+retain / Comet / Comet on Quiver) | Wall | Probe tasks' run time | Probe tasks' CPU | Slowest task | Process CPU | Decodes | Tables built | Largest entry kept |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    ) ++ rows ++
      Seq(
        "",
        s"Medians of $rounds round(s); every round ran Spark, off and on in rotating order; " +
          "on+retain ran its rounds after, in a SparkContext of its own (retention is fixed per executor)."
      ) ++
      (if (runs.exists(_.setting == Comet))
         Seq(
           "Comet (1.2.0, its native broadcast hash join: the bench checks every plan) ran its " +
             "rounds last, in a SparkContext of its own with off-heap memory, which Comet needs. " +
             "Its native code may work on threads other than the task's: its probe tasks' CPU " +
             "(the task threads' CPU time) may under-count it; Process CPU counts every thread. " +
             "Comet on Quiver (the same, its build side read through Quiver's cache by " +
             "dev.quiver.comet.QuiverCometExtensions, with retention) ran after it, in a " +
             "SparkContext of its own too."
         )
       else cometSkipped.map(why => s"Comet did not run: $why.").toSeq) ++
      options.scaledNote.map(n => s"Shapes $n.").toSeq ++ Seq("", "Sharing off vs on:") ++ ratios ++
      Seq("", "Quiver / Spark's own join:") ++ against("Spark") ++
      (if (againstComet.isEmpty) Seq.empty
       else
         Seq("", "Quiver / Comet (probe tasks' CPU: Comet's may be under-counted, see above):") ++
           againstComet) ++
      (if (cometOnQuiver.isEmpty) Seq.empty
       else Seq("", "Comet on Quiver / Comet:") ++ cometOnQuiver) ++
      options.master.toSeq.flatMap { url =>
        Seq(
          "",
          s"On the cluster at $url (the shapes keep their local names; they ran on the " +
            "cluster's executors, and Process CPU is the driver's alone): decodes / tables " +
            "built per executor, medians of the rounds (Decodes and Tables built above add the " +
            "driver's, which Spark's code generation reads):"
        ) ++ perExecutor
      })
      .mkString("\n")
  }

  def csv: String =
    ReportText.csv(
      "build_rows,probe_tasks,cores,rows_per_file,setting,round,wall_ms,run_ms,cpu_ms,slowest_ms," +
        "process_cpu_ms,decodes,tables_built,largest_entry_bytes",
      runs.map { r =>
        Seq[Any](
          r.shape.buildRows,
          r.shape.probeTasks,
          r.shape.cores,
          r.shape.rowsPerFile,
          r.setting,
          r.round,
          r.wallMillis,
          r.runMillis,
          r.cpuMillis,
          r.slowestMillis,
          r.processCpuMillis,
          r.decodes,
          r.builds,
          r.bytesKept
        )
      }
    )

  /** Probe tasks' CPU per shape, Spark / off / on side by side, each shape on its own scale. */
  def svg: String = {
    val groupWidth = 40 + BroadcastJoinBench.Settings.size * 65
    val height = 320
    val top = 60
    val barArea = 200
    val colours =
      Map(
        "Spark" -> "#9e9e9e",
        "off" -> "#e57373",
        "on" -> "#4caf50",
        "on+retain" -> "#1e88e5",
        Comet -> "#ffb300",
        OnQuiver -> "#8e24aa"
      )
    val width = math.max(1, shapes.size) * groupWidth + 40
    val groups = shapes.zipWithIndex.map { case (shape, i) =>
      val ms = BroadcastJoinBench.Settings.flatMap(s => medians(shape, s).map(s -> _.cpuMillis))
      val max = math.max(1L, if (ms.isEmpty) 1L else ms.map(_._2).max)
      val x0 = 30 + i * groupWidth
      val bars = ms.zipWithIndex.map { case ((setting, value), j) =>
        val h = (value.toDouble / max * barArea).round.toInt
        val x = x0 + 20 + j * 65
        val y = top + barArea - h
        s"""<rect x="$x" y="$y" width="50" height="$h" fill="${colours(setting)}"/>""" +
          s"""<text x="${x + 25}" y="${y - 4}" font-size="11" text-anchor="middle">${value} ms</text>""" +
          s"""<text x="${x + 25}" y="${top + barArea + 14}" font-size="11" text-anchor="middle">$setting</text>"""
      }
      bars.mkString +
        s"""<text x="${x0 + groupWidth / 2 - 10}" y="${top + barArea + 34}" font-size="12" text-anchor="middle">${xml(
            shape.name
          )}</text>"""
    }
    s"""<svg xmlns="http://www.w3.org/2000/svg" width="$width" height="$height" font-family="sans-serif">""" +
      """<text x="20" y="24" font-size="15">Probe tasks' CPU time (median), Spark's join vs """ +
      """Quiver's with sharing off and on, and Comet's where it ran</text>""" +
      """<text x="20" y="42" font-size="11">Each shape on its own scale; lower is better.</text>""" +
      groups.mkString + "</svg>\n"
  }

  def write(dir: File): Unit = {
    save(new File(dir, "results.md"), markdown + "\n\n![chart](results.svg)\n")
    save(new File(dir, "results.csv"), csv)
    save(new File(dir, "results.svg"), svg)
  }

  private def mib(bytes: Long): String = f"${bytes / 1048576.0}%,.1f MiB"

  private def xml(text: String): String =
    text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

}
