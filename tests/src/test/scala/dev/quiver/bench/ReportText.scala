package dev.quiver.bench

import java.io.{File, PrintWriter}
import java.nio.charset.StandardCharsets

/** What the main job's reports share: medians, ratios and writing a file. */
object ReportText {

  def median(values: Seq[Long]): Long = {
    val sorted = values.sorted
    if (sorted.isEmpty) 0L
    else if (sorted.size % 2 == 1) sorted(sorted.size / 2)
    else (sorted(sorted.size / 2 - 1) + sorted(sorted.size / 2)) / 2
  }

  /** `a / b` as "1.23×", or "n/a" when `b` is zero. */
  def ratio(a: Long, b: Long): String =
    if (b == 0) "n/a" else f"${a.toDouble / b}%.2f×"

  def save(file: File, text: String): Unit = {
    val out = new PrintWriter(file, StandardCharsets.UTF_8.name())
    try out.write(text)
    finally out.close()
  }
}
