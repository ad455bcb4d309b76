package dev.quiver.bench

import java.io.File

/**
 * One benchmark shape: a build side of `buildRows` rows joined by `probeTasks` probe tasks (one
 * Parquet file each, `rowsPerFile` rows) on `local[cores]`.
 */
final case class Shape(buildRows: Int, probeTasks: Int, cores: Int, rowsPerFile: Int) {

  def name: String = s"${BenchOptions.count(buildRows)} build, $probeTasks tasks, local[$cores]"

  /** A shape `factor` times the size, keeping tasks per build row (the shape's ratio). */
  def scaled(factor: Double): Shape =
    copy(
      buildRows = math.max(1000, (buildRows * factor).round.toInt),
      probeTasks = math.max(2, (probeTasks * factor).round.toInt)
    )
}

/** The main job's options: `dev/bench [--quick] [--shapes a,b] [--rounds N] [--out DIR]`. */
final case class BenchOptions(
    shapes: Seq[Shape],
    rounds: Int,
    warmups: Int,
    out: File,
    data: File,
    scaledNote: Option[String]
)

object BenchOptions {

  /** The shapes of the issue: what an engine developer's cluster sees. */
  val FullShapes: Map[String, Shape] = Map(
    "1m-32" -> Shape(1000000, 32, 8, 65536),
    "1m-128" -> Shape(1000000, 128, 8, 65536),
    "10k-200" -> Shape(10000, 200, 8, 65536),
    "1m-32-local1" -> Shape(1000000, 32, 1, 65536)
  )

  val ShapeOrder: Seq[String] = Seq("1m-32", "1m-128", "10k-200", "1m-32-local1")

  /**
   * The default run scales every shape by this factor (tasks and build rows together, so tasks
   * per build row stay as in the full shape) and uses smaller probe files, so that a 2-core
   * machine finishes in under 15 minutes. `--full` runs the shapes as specified.
   */
  val DefaultScale = 0.25
  val DefaultRowsPerFile = 16384

  val usage: String =
    """dev/bench [--quick] [--full] [--shapes 1m-32,1m-128,10k-200,1m-32-local1] [--rounds N]
      |          [--warmups N] [--out DIR] [--data DIR]""".stripMargin

  final private case class Parsed(
      names: Seq[String] = ShapeOrder,
      rounds: Int = 8,
      warmups: Int = 2,
      out: File = new File("bench-out"),
      data: File = new File("bench-data"),
      mode: String = "default"
  )

  @scala.annotation.tailrec
  private def parseArgs(args: List[String], parsed: Parsed): Parsed = args match {
    case Nil => parsed
    case "--quick" :: tail => parseArgs(tail, parsed.copy(mode = "quick"))
    case "--full" :: tail => parseArgs(tail, parsed.copy(mode = "full"))
    case "--shapes" :: list :: tail =>
      parseArgs(tail, parsed.copy(names = list.split(",").toSeq.map(_.trim)))
    case "--rounds" :: n :: tail => parseArgs(tail, parsed.copy(rounds = n.toInt))
    case "--warmups" :: n :: tail => parseArgs(tail, parsed.copy(warmups = n.toInt))
    case "--out" :: dir :: tail => parseArgs(tail, parsed.copy(out = new File(dir)))
    case "--data" :: dir :: tail => parseArgs(tail, parsed.copy(data = new File(dir)))
    case other :: _ =>
      throw new IllegalArgumentException(s"unknown option '$other'; usage:\n$usage")
  }

  def parse(args: Seq[String]): BenchOptions = {
    val Parsed(names, rounds, warmups, out, data, mode) = parseArgs(args.toList, Parsed())
    val unknown = names.filterNot(FullShapes.contains)
    require(
      unknown.isEmpty,
      s"unknown shapes ${unknown.mkString(", ")}; known: ${ShapeOrder.mkString(", ")}"
    )
    val full = names.map(FullShapes)
    mode match {
      case "quick" =>
        val quick = full.map(s => s.scaled(0.02).copy(rowsPerFile = 2048))
        BenchOptions(
          quick,
          1,
          0,
          out,
          new File(data, "quick"),
          Some("--quick: 2% of each shape, 2,048-row probe files, one round")
        )
      case "full" => BenchOptions(full, rounds, warmups, out, new File(data, "full"), None)
      case _ =>
        val scaled = full.map(_.scaled(DefaultScale).copy(rowsPerFile = DefaultRowsPerFile))
        BenchOptions(
          scaled,
          rounds,
          warmups,
          out,
          new File(data, "default"),
          Some(
            s"scaled to ${(DefaultScale * 100).toInt}% of each shape (build rows and probe tasks " +
              s"together, keeping tasks per build row) with $DefaultRowsPerFile-row probe files, " +
              "to finish in under 15 minutes on 2 cores; --full runs the shapes as specified"
          )
        )
    }
  }

  def count(n: Long): String =
    if (n >= 1000000 && n % 1000000 == 0) s"${n / 1000000}M"
    else if (n >= 1000 && n % 1000 == 0) s"${n / 1000}K"
    else n.toString
}
