package dev.quiver.bench.tpch

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import dev.quiver.bench.{CometJoin, MainJobProcess}
import dev.quiver.bench.tpch.TpchWorkload.{Broadcasts, Run, Spark}
import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

/**
 * The TPC-H workload of the main job: its run at the smallest scale (`dev/bench --workload tpch
 * --quick`, in a JVM of its own as the script runs it), and the checks that make a wrong answer
 * or an extra decode fail that run.
 */
class TpchWorkloadSuite extends AnyFunSuite {

  private val Comet = CometJoin.Setting
  private val OnQuiver = CometJoin.OnQuiverSetting

  test("dev/bench --workload tpch --quick: every query equal across the settings, decoded once") {
    assume(MainJobProcess.notThisBuild.isEmpty, MainJobProcess.notThisBuild.mkString)
    val work = Files.createTempDirectory("quiver-tpch").toFile
    val out = new File(work, "out")
    val args = Seq("--workload", "tpch", "--quick", "--out", out.getPath, "--data", work.getPath)
    val result = MainJobProcess.run(args, work, minutes = 10)
    assert(result.finished, s"the TPC-H workload did not finish:\n${result.output}")
    assert(result.exitValue == 0, s"the TPC-H workload failed:\n${result.output}")
    val withComet = CometJoin.bundledForThisMachine
    val settings = if (withComet) TpchWorkload.Settings else Seq(Spark)
    assert(
      result.output.contains(s"22 of 22 queries equal across ${settings.mkString(", ")}"),
      result.output
    )
    if (!withComet) assert(result.output.contains("tpch: Comet did not run: "), result.output)

    val runs = MainJobProcess.csvRows(new File(out, "tpch.csv"))
    def of(setting: String) = runs.filter(_("setting") == setting)
    def sum(rows: Seq[Map[String, String]], column: String) = rows.map(_(column).toLong).sum
    for (setting <- settings)
      assert(of(setting).map(_("query")).sorted == TpchQueries.Names.sorted, setting)
    // Spark's own plans broadcast, and Quiver decodes nothing for them.
    assert(sum(of(Spark), "spark_broadcasts") > 0)
    assert(sum(of(Spark), "comet_broadcasts") + sum(of(Spark), "quiver_broadcasts") == 0)
    assert(sum(of(Spark), "decodes") == 0)
    if (withComet) {
      // Comet reads its own broadcasts; on Quiver, Quiver reads them: each decoded at most once.
      assert(sum(of(Comet), "comet_broadcasts") > 0 && sum(of(Comet), "quiver_broadcasts") == 0)
      assert(sum(of(Comet), "decodes") == 0)
      assert(sum(of(OnQuiver), "comet_broadcasts") == 0)
      assert(sum(of(OnQuiver), "quiver_broadcasts") == sum(of(Comet), "comet_broadcasts"))
      assert(sum(of(OnQuiver), "decodes") > 0)
      for (run <- of(OnQuiver))
        assert(run("decodes").toLong <= run("quiver_broadcasts").toLong, run)
    }
    val table =
      new String(Files.readAllBytes(new File(out, "tpch.md").toPath), StandardCharsets.UTF_8)
    for (q <- TpchQueries.Names) assert(table.contains(s"| $q |"), s"no row for $q:\n$table")
    assert(table.contains("| **total** |"), table)
    assert(new File(out, "tpch.svg").length() > 0)
  }

  /** A run whose plan also has one of Spark's own broadcasts, which Quiver never decodes. */
  private def run(setting: String, decodes: Long = 0, quiver: Int = 0): Run =
    Run("q1", setting, 1, 10, 20, decodes, 0, Broadcasts(1, 0, quiver), 1)

  private val answer = Seq(Row("A", new java.math.BigDecimal("10.25"), 0.1 + 0.2, 3L))

  test("the settings' answers agree: nothing to report") {
    val results = Seq(run(Spark), run(Comet), run(OnQuiver, decodes = 2, quiver = 2))
      .map(_ -> answer)
    assert(TpchWorkload.check("q1", "round 1/1", results).isEmpty)
  }

  test("Comet on Quiver differing from Comet in one cent is reported with the query") {
    val other = Seq(Row("A", new java.math.BigDecimal("10.26"), 0.1 + 0.2, 3L))
    val results = Seq(run(Spark) -> answer, run(Comet) -> answer, run(OnQuiver) -> other)
    val problems = TpchWorkload.check("q7", "round 2/3", results)
    assert(problems.size == 2, problems)
    assert(
      problems.exists(_.startsWith(s"q7, round 2/3: $Comet and $OnQuiver differ: 1 of 1 rows"))
    )
    assert(problems.exists(_.contains("10.26")), problems)
  }

  test("more decodes than broadcasts read through Quiver is reported; none for Comet's own") {
    val results =
      Seq(run(Spark), run(Comet, decodes = 1), run(OnQuiver, decodes = 3, quiver = 2))
        .map(_ -> answer)
    val problems = TpchWorkload.check("q5", "round 1/1", results)
    assert(
      problems.toSet == Set(
        s"q5, round 1/1, $Comet: 1 decodes for 0 broadcasts through Quiver",
        s"q5, round 1/1, $OnQuiver: 3 decodes for 2 broadcasts through Quiver"
      )
    )
  }

  test("floating values agree within the tolerance between engines, exactly between Comets") {
    val sum = 0.1 + 0.2
    val reordered = 0.2 + 0.1 + 1e-17
    assert(RowComparison.difference(Seq(Row(sum)), Seq(Row(reordered)), exact = false).isEmpty)
    assert(
      RowComparison.difference(Seq(Row(sum)), Seq(Row(sum * (1 + 1e-6))), exact = false).nonEmpty
    )
    assert(RowComparison.difference(Seq(Row(0.3)), Seq(Row(sum)), exact = true).nonEmpty)
    // Decimals compare by value between engines, and never within a tolerance.
    val cents = new java.math.BigDecimal("1.10")
    assert(RowComparison.valuesEqual(cents, new java.math.BigDecimal("1.1"), exact = false))
    assert(!RowComparison.valuesEqual(cents, new java.math.BigDecimal("1.11"), exact = false))
    assert(!RowComparison.valuesEqual(null, cents, exact = false))
    assert(
      RowComparison
        .difference(Seq(Row(1L)), Seq(Row(1L), Row(2L)), exact = true)
        .contains("1 rows against 2")
    )
  }
}
