package dev.quiver.bench

import java.io.{File, PrintWriter}
import java.nio.charset.StandardCharsets

/** What the main job's reports share: medians, ratios and writing a file. */
object ReportText {

  /** One run of a report: a shape under a setting in one round. */
  trait ShapeRun {
    def shape: Shape
    def setting: String
    def round: Int
  }

  /**
   * The runs of a report grouped by shape and setting, each group merged into one run by `merge`
   * (the medians of its figures).
   */
  final class Medians[R <: ShapeRun](runs: Seq[R], options: BenchOptions)(merge: Seq[R] => R) {

    /** The shapes that ran, in the order the options name them. */
    val shapes: Seq[Shape] = options.shapes.filter(s => runs.exists(_.shape == s))

    /** How many rounds ran. */
    def rounds: Int = runs.map(_.round).distinct.size

    def apply(shape: Shape, setting: String): Option[R] = {
      val rs = runs.filter(r => r.shape == shape && r.setting == setting)
      if (rs.isEmpty) None else Some(merge(rs))
    }

    /** One table row per shape and setting that ran, shapes first, settings in their order. */
    def rows(settings: Seq[String])(row: (Shape, String, R) => String): Seq[String] =
      for {
        shape <- shapes
        setting <- settings
        m <- apply(shape, setting)
      } yield row(shape, setting, m)
  }

  def median(values: Seq[Long]): Long = {
    val sorted = values.sorted
    if (sorted.isEmpty) 0L
    else if (sorted.size % 2 == 1) sorted(sorted.size / 2)
    else (sorted(sorted.size / 2 - 1) + sorted(sorted.size / 2)) / 2
  }

  /** Milliseconds as "1,234 ms". */
  def ms(value: Long): String = f"$value%,d ms"

  /** `a / b` as "1.23×", or "n/a" when `b` is zero. */
  def ratio(a: Long, b: Long): String =
    if (b == 0) "n/a" else f"${a.toDouble / b}%.2f×"

  /** A CSV file's text: `header`'s line, then one line of each row's fields. */
  def csv(header: String, rows: Seq[Seq[Any]]): String =
    (header +: rows.map(_.mkString(","))).mkString("\n") + "\n"

  def save(file: File, text: String): Unit = {
    val out = new PrintWriter(file, StandardCharsets.UTF_8.name())
    try out.write(text)
    finally out.close()
  }
}
