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

/** The main job's options: what `dev/bench` passes through (see `BenchOptions.usage`). */
final case class BenchOptions(
    shapes: Seq[Shape],
    rounds: Int,
    warmups: Int,
    out: File,
    data: File,
    scaledNote: Option[String],
    sections: Seq[String] = BenchOptions.Sections,
    master: Option[String] = None,
    workload: String = BenchOptions.JoinWorkload,
    scale: Double = BenchOptions.TpchScale
) {
  def runs(section: String): Boolean = sections.contains(section)

  /** TPC-H's scale factor as the data folder and the log name it: 1, 0.01. */
  def scaleName: String = java.math.BigDecimal.valueOf(scale).stripTrailingZeros.toPlainString
}

object BenchOptions {

  /** The shapes of the issue: what an engine developer's cluster sees. */
  val FullShapes: Map[String, Shape] = Map(
    "1m-32" -> Shape(1000000, 32, 8, 65536),
    "1m-128" -> Shape(1000000, 128, 8, 65536),
    "10k-200" -> Shape(10000, 200, 8, 65536),
    "1m-32-local1" -> Shape(1000000, 32, 1, 65536)
  )

  val ShapeOrder: Seq[String] = Seq("1m-32", "1m-128", "10k-200", "1m-32-local1")

  /** The join queries against Spark's own join, and the read path against Comet's reader. */
  val Sections: Seq[String] = Seq("join", "read")

  /** The synthetic broadcast join of the shapes above, with its read-path section. */
  val JoinWorkload = "join"

  /** TPC-H's 22 queries under Spark, Comet and Comet on Quiver (`dev.quiver.bench.tpch`). */
  val TpchWorkload = "tpch"

  val Workloads: Seq[String] = Seq(JoinWorkload, TpchWorkload)

  /** TPC-H's scale factor by default, and with `--quick` (60,000 lineitem rows). */
  val TpchScale = 1.0
  val TpchQuickScale = 0.01

  /** TPC-H's rounds and warm-ups by default: 22 queries under three settings each round. */
  val TpchRounds = 3
  val TpchWarmups = 1

  /**
   * The default run scales every shape by this factor (tasks and build rows together, so tasks
   * per build row stay as in the full shape) and uses smaller probe files, so that a 2-core
   * machine finishes in under 15 minutes. `--full` runs the shapes as specified.
   */
  val DefaultScale = 0.25
  val DefaultRowsPerFile = 16384

  /** `--quick`, a smoke run: this fraction of each shape, smaller probe files, one round. */
  val QuickScale = 0.02
  val QuickRowsPerFile = 2048

  private val QuickNote =
    s"${(QuickScale * 100).round}% of each shape, $QuickRowsPerFile-row probe files, one round"

  final private case class Parsed(
      names: Seq[String] = ShapeOrder,
      rounds: Option[Int] = None,
      warmups: Option[Int] = None,
      out: File = new File("bench-out"),
      data: File = new File("bench-data"),
      mode: String = "default",
      sections: Option[Seq[String]] = None,
      master: Option[String] = None,
      workload: String = JoinWorkload,
      scale: Option[Double] = None
  )

  private val JoinRounds = 8
  private val JoinWarmups = 2

  /** One command-line option: its name, its value's name if it takes one, what it does. */
  final private case class Flag(
      name: String,
      value: Option[String],
      help: String,
      set: (Parsed, String) => Parsed
  ) {
    def synopsis: String = name + value.fold("")(" " + _)
  }

  private val Flags: Seq[Flag] = Seq(
    Flag(
      "--workload",
      Some("NAME"),
      s"$JoinWorkload (the synthetic broadcast join, default) or $TpchWorkload (TPC-H's queries)",
      (p, v) => p.copy(workload = v.trim)
    ),
    Flag(
      "--scale",
      Some("SF"),
      s"TPC-H's scale factor (default ${count(TpchScale.toLong)}; --quick $TpchQuickScale)",
      (p, v) => p.copy(scale = Some(v.toDouble))
    ),
    Flag(
      "--quick",
      None,
      s"a smoke run: $QuickNote (tpch: scale $TpchQuickScale)",
      (p, _) => p.copy(mode = "quick")
    ),
    Flag(
      "--full",
      None,
      s"the shapes as specified (by default each is scaled to ${(DefaultScale * 100).toInt}%)",
      (p, _) => p.copy(mode = "full")
    ),
    Flag(
      "--shapes",
      Some("LIST"),
      s"the shapes, of ${ShapeOrder.mkString(", ")} (default: all)",
      (p, v) => p.copy(names = v.split(",").toSeq.map(_.trim))
    ),
    Flag(
      "--sections",
      Some("LIST"),
      s"the sections, of ${Sections.mkString(", ")} (default: both; join with --master)",
      (p, v) => p.copy(sections = Some(v.split(",").toSeq.map(_.trim)))
    ),
    Flag(
      "--rounds",
      Some("N"),
      s"measured rounds per shape and setting (default $JoinRounds; tpch $TpchRounds)",
      (p, v) => p.copy(rounds = Some(v.toInt))
    ),
    Flag(
      "--warmups",
      Some("N"),
      s"unmeasured rounds before them (default $JoinWarmups; tpch $TpchWarmups)",
      (p, v) => p.copy(warmups = Some(v.toInt))
    ),
    Flag(
      "--out",
      Some("DIR"),
      s"where the table, CSV and chart go (default ${Parsed().out})",
      (p, v) => p.copy(out = new File(v))
    ),
    Flag(
      "--data",
      Some("DIR"),
      s"where the generated Parquet tables are kept (default ${Parsed().data})",
      (p, v) => p.copy(data = new File(v))
    ),
    Flag(
      "--master",
      Some("URL"),
      "the join section on a cluster (dev/cluster), with per-executor figures",
      (p, v) => p.copy(master = Some(v))
    )
  )

  /**
   * `dev/bench`'s usage, made from the options [[parse]] takes; the header of `dev/bench`, which
   * `dev/bench --help` prints, carries the same text (BenchScriptSuite checks).
   */
  val usage: String = {
    val command = "dev/bench"
    val synopsis = Flags.map(f => s"[${f.synopsis}]").foldLeft(Seq(command)) { (lines, word) =>
      if (lines.last.length + 1 + word.length <= 80) lines.init :+ s"${lines.last} $word"
      else lines :+ s"${" " * command.length} $word"
    }
    val width = Flags.map(_.synopsis.length).max
    val options = Flags.map(f => s"  ${f.synopsis.padTo(width, ' ')}  ${f.help}")
    (synopsis ++ options).mkString("\n")
  }

  @scala.annotation.tailrec
  private def parseArgs(args: List[String], parsed: Parsed): Parsed = args match {
    case Nil => parsed
    case name :: rest =>
      Flags.find(_.name == name) match {
        case Some(flag) if flag.value.isEmpty => parseArgs(rest, flag.set(parsed, ""))
        case Some(flag) if rest.nonEmpty => parseArgs(rest.tail, flag.set(parsed, rest.head))
        case Some(flag) =>
          throw new IllegalArgumentException(
            s"option '$name' needs ${flag.value.get}; usage:\n$usage"
          )
        case None => throw new IllegalArgumentException(s"unknown option '$name'; usage:\n$usage")
      }
  }

  def parse(args: Seq[String]): BenchOptions = {
    val asked = parseArgs(args.toList, Parsed())
    require(
      Workloads.contains(asked.workload),
      s"unknown workload ${asked.workload}; known: ${Workloads.mkString(", ")}"
    )
    if (asked.workload == TpchWorkload) tpch(asked) else join(asked)
  }

  /** TPC-H: its scale, rounds and data folder; the shapes and sections are the join's alone. */
  private def tpch(asked: Parsed): BenchOptions = {
    require(asked.master.isEmpty, "--master runs the join workload only")
    val quick = asked.mode == "quick"
    val scale = asked.scale.getOrElse(if (quick) TpchQuickScale else TpchScale)
    require(scale > 0 && scale <= 100, s"--scale takes a factor above 0 and at most 100: $scale")
    val options = BenchOptions(
      Seq.empty,
      asked.rounds.getOrElse(if (quick) 1 else TpchRounds),
      asked.warmups.getOrElse(if (quick) 0 else TpchWarmups),
      asked.out,
      asked.data,
      None,
      Seq.empty,
      None,
      TpchWorkload,
      scale
    )
    options.copy(data = new File(new File(asked.data, "tpch"), s"sf${options.scaleName}"))
  }

  private def join(asked: Parsed): BenchOptions = {
    require(asked.scale.isEmpty, "--scale is TPC-H's: give --workload tpch with it")
    val Parsed(names, roundsAsked, warmupsAsked, out, data, mode, sectionsAsked, master, _, _) =
      asked
    val rounds = roundsAsked.getOrElse(JoinRounds)
    val warmups = warmupsAsked.getOrElse(JoinWarmups)
    // The read path measures Comet's reader beside Quiver's in one JVM: local mode only.
    val sections = sectionsAsked.getOrElse(if (master.isDefined) Seq("join") else Sections)
    require(
      master.isEmpty || !sections.contains("read"),
      "--master runs the join section only: the read section compares readers in one JVM"
    )
    val unknown = names.filterNot(FullShapes.contains)
    require(
      unknown.isEmpty,
      s"unknown shapes ${unknown.mkString(", ")}; known: ${ShapeOrder.mkString(", ")}"
    )
    val unknownSections = sections.filterNot(Sections.contains)
    require(
      unknownSections.isEmpty && sections.nonEmpty,
      s"unknown sections ${unknownSections.mkString(", ")}; known: ${Sections.mkString(", ")}"
    )
    parsed(names, rounds, warmups, out, data, mode).copy(sections = sections, master = master)
  }

  private def parsed(
      names: Seq[String],
      rounds: Int,
      warmups: Int,
      out: File,
      data: File,
      mode: String
  ): BenchOptions = {
    val full = names.map(FullShapes)
    mode match {
      case "quick" =>
        val quick = full.map(s => s.scaled(QuickScale).copy(rowsPerFile = QuickRowsPerFile))
        BenchOptions(
          quick,
          1,
          0,
          out,
          new File(data, "quick"),
          Some(s"--quick: $QuickNote")
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
