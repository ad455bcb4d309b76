package dev.quiver.bench

import java.io.File

import dev.quiver.bench.ReadPathBench.ReadRun
import dev.quiver.bench.ReportText.{median, ratio, save, Medians}

/**
 * The read-path section's results: a Markdown table of medians with Quiver / peer ratios, and a
 * CSV of every run (`read-path.md`, `read-path.csv`).
 *
 * @param skipped why no peer ran, if none did
 */
class ReadPathReport(runs: Seq[ReadRun], options: BenchOptions, skipped: Option[String]) {

  private val medians = new Medians(runs, options)(rs =>
    rs.head.copy(
      wallMillis = median(rs.map(_.wallMillis)),
      cpuNanos = median(rs.map(_.cpuNanos)),
      decodes = median(rs.map(_.decodes))
    )
  )

  private val shapes: Seq[Shape] = medians.shapes

  /** The readers in a fixed order: each peer's off and on, then Quiver's off, on, on+retain. */
  private val settings: Seq[String] = {
    val seen = runs.map(_.setting).distinct
    val quiver = Seq("Quiver off", "Quiver on", ReadPathBench.Retained)
    seen.filterNot(quiver.contains).sorted ++ quiver.filter(seen.contains)
  }

  def markdown: String = {
    val rows = medians.rows(settings) { (shape, setting, m) =>
      s"| ${shape.name} | $setting | ${ms(m.cpuNanos)} | ${f"${m.wallMillis}%,d"} ms | " +
        s"${m.decodes} |"
    }
    val peers = settings
      .filterNot(s => s.startsWith("Quiver") || s == PeerBroadcastReader.CometOnQuiver)
      .map(_.split(' ').head)
      .distinct
    val ratios = for {
      shape <- shapes
      peer <- peers
      (quiver, theirs) <- Seq(
        "Quiver off" -> s"$peer off",
        "Quiver on" -> s"$peer on",
        ReadPathBench.Retained -> s"$peer on",
        PeerBroadcastReader.CometOnQuiver -> s"$peer on"
      )
      q <- medians(shape, quiver)
      p <- medians(shape, theirs)
    } yield s"- ${shape.name}: $quiver / $theirs, tasks' CPU ${ratio(q.cpuNanos, p.cpuNanos)}, " +
      s"decodes ${q.decodes} vs ${p.decodes}"
    val rounds = medians.rounds
    (Seq(
      "| Shape | Reader | Tasks' CPU | Wall | Decodes |",
      "|---|---|---:|---:|---:|"
    ) ++ rows ++ Seq(
      "",
      s"Medians of $rounds round(s) of every task reading the whole broadcast, counting its rows " +
        "and summing a long column through ColumnVector.getLong; the readers of one SparkContext " +
        s"ran in rotating order, ${ReadPathBench.Retained} (and ${PeerBroadcastReader.CometOnQuiver}, " +
        "the adapter's read of the CometBroadcastValue, with retention) in a SparkContext of its own."
    ) ++ skipped.map(why => s"No peer ran: $why.").toSeq ++
      (if (ratios.isEmpty) Seq.empty else Seq("", "Quiver / peer:") ++ ratios)).mkString("\n")
  }

  def csv: String =
    ReportText.csv(
      "build_rows,probe_tasks,cores,reader,round,wall_ms,cpu_ns,decodes,rows,sum",
      runs.map { r =>
        Seq[Any](
          r.shape.buildRows,
          r.shape.probeTasks,
          r.shape.cores,
          r.setting,
          r.round,
          r.wallMillis,
          r.cpuNanos,
          r.decodes,
          r.rows,
          r.sum
        )
      }
    )

  def write(dir: File): Unit = {
    save(new File(dir, "read-path.md"), markdown + "\n")
    save(new File(dir, "read-path.csv"), csv)
  }

  private def ms(nanos: Long): String = f"${nanos / 1e6}%,.1f ms"

}
