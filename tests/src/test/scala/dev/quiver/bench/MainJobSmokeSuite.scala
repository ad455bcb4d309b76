package dev.quiver.bench

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

/**
 * Runs the main job (`dev/bench --quick`: the same class on the same classpath, in its own JVM as
 * the script does) so that it cannot silently rot, and checks what it reports. On the default
 * profile's build only, the one `dev/bench` runs; the others compile it.
 */
class MainJobSmokeSuite extends AnyFunSuite {

  test("dev/bench --quick finishes, the settings agree, and the report is written") {
    assume(MainJobProcess.notThisBuild.isEmpty, MainJobProcess.notThisBuild.mkString)
    val work = Files.createTempDirectory("quiver-bench").toFile
    val out = new File(work, "out")
    val result = MainJobProcess.run(
      Seq("--quick", "--out", out.getPath, "--data", new File(work, "data").getPath),
      work,
      minutes = 10
    )
    val output = result.output
    assert(result.finished, s"dev/bench --quick did not finish:\n$output")
    assert(result.exitValue == 0, s"dev/bench --quick failed:\n$output")
    // Comet's setting runs wherever its jar is on the classpath with a native library for this
    // machine (the default build on Linux); elsewhere the bench says why it skipped it.
    val withComet = CometJoin.bundledForThisMachine
    val agreeing =
      if (withComet) "Spark, off, on, on+retain, Comet and Comet on Quiver"
      else "Spark, off, on and on+retain"
    assert(output.contains(s"sums agree across $agreeing in every round"), output)
    if (!withComet) assert(output.contains("join: Comet did not run: "), output)
    assert(output.contains("rows and sums agree across the readers in every round"), output)

    val table =
      new String(Files.readAllBytes(new File(out, "results.md").toPath), StandardCharsets.UTF_8)
    assert(
      table.contains(
        "| Shape | Setting (Spark / off / on / on+retain / Comet / Comet on Quiver) | Wall |"
      )
    )
    val settings =
      BroadcastJoinBench.Settings.filter(s =>
        withComet || !BroadcastJoinBench.CometSettings.contains(s)
      )
    for (shape <- BenchOptions.ShapeOrder.map(BenchOptions.FullShapes)) {
      val name = shape.scaled(BenchOptions.QuickScale).name
      for (setting <- settings)
        assert(table.contains(s"| $name | $setting |"), s"no row for $name, $setting in:\n$table")
    }
    val runs = MainJobProcess.csvRows(new File(out, "results.csv"))
    val csv = runs.mkString("\n")
    def total(column: String, setting: String): Long =
      runs.filter(_("setting") == setting).map(_(column).toLong).sum
    // With sharing on, overlapping tasks never decode more often than with it off.
    assert(total("decodes", "on") <= total("decodes", "off"))
    // Retention: tasks that no longer overlap read the retained entry instead of decoding again.
    assert(total("decodes", BroadcastJoinBench.Retained) <= total("decodes", "on"))
    // Each decoded copy gets one table; Spark's own join builds none of Quiver's.
    for (setting <- Seq("off", "on", BroadcastJoinBench.Retained))
      assert(total("tables_built", setting) == total("decodes", setting), setting)
    for (setting <- "Spark" +: BroadcastJoinBench.CometSettings)
      assert(total("tables_built", setting) == 0, setting)
    assert(total("decodes", CometJoin.Setting) == 0)
    // Only retention keeps anything past a query: a decoded copy and its table.
    assert(total("largest_entry_bytes", BroadcastJoinBench.Retained) > 0)
    for (setting <- Seq("Spark", "off", "on", CometJoin.Setting))
      assert(total("largest_entry_bytes", setting) == 0, setting)
    if (withComet) {
      assert(runs.exists(_("setting") == CometJoin.Setting), csv)
      assert(table.contains("Quiver / Comet"), table)
      // Comet on Quiver: each query's new broadcast decoded once on the (one) executor, and kept.
      val onQuiverRuns = runs.count(_("setting") == CometJoin.OnQuiverSetting)
      assert(onQuiverRuns > 0, csv)
      assert(total("decodes", CometJoin.OnQuiverSetting) == onQuiverRuns, csv)
      assert(total("largest_entry_bytes", CometJoin.OnQuiverSetting) > 0, csv)
      assert(table.contains("Comet on Quiver / Comet:"), table)
    } else assert(table.contains("Comet did not run: "), table)
    assert(new File(out, "results.svg").length() > 0)

    // The read path: Quiver's reader, and Comet's where this build has it, on the same bytes.
    val peer = PeerBroadcastReader.comet().toOption.map(_.name)
    val readers = peer.toSeq.flatMap(p => Seq(s"$p off", s"$p on")) ++
      Seq("Quiver off", "Quiver on", ReadPathBench.Retained) ++
      peer.map(_ => PeerBroadcastReader.CometOnQuiver)
    val reads =
      new String(Files.readAllBytes(new File(out, "read-path.md").toPath), StandardCharsets.UTF_8)
    for (shape <- BenchOptions.ShapeOrder.map(BenchOptions.FullShapes)) {
      val name = shape.scaled(BenchOptions.QuickScale).name
      for (reader <- readers)
        assert(reads.contains(s"| $name | $reader |"), s"no row for $name, $reader in:\n$reads")
    }
    if (peer.isEmpty) assert(reads.contains("No peer ran: "), reads)
    val readRuns = MainJobProcess.csvRows(new File(out, "read-path.csv"))
    val readCsv = readRuns.mkString("\n")
    for (run <- readRuns) {
      val tasks = run("probe_tasks").toLong
      val decodes = run("decodes").toLong
      // Without sharing every task decodes for itself, Comet's (counted by its streams' openings)
      // as Quiver's; with it, at most that often.
      if (run("reader").endsWith(" off")) assert(decodes == tasks, run)
      else assert(decodes <= tasks, run)
    }
    // Comet on Quiver: one broadcast per shape's session, decoded once over all its rounds.
    val onQuiver = readRuns.filter(_("reader") == PeerBroadcastReader.CometOnQuiver)
    assert(onQuiver.nonEmpty == peer.nonEmpty, readCsv)
    for (
      (shape, runs) <- onQuiver
        .groupBy(run => Seq("build_rows", "probe_tasks", "cores").map(run))
    )
      assert(runs.map(_("decodes").toLong).sum <= 1, s"$shape: $readCsv")
  }
}
