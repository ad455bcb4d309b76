package org.apache.spark.sql.quiver

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.util.concurrent.TimeUnit

import dev.quiver.spark.QuiverSettings
import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

/** Quiver's settings: their keys, their scope, their registration and their documentation. */
class SettingsSuite extends AnyFunSuite with QuiverSparkSession {

  private val TableBegin =
    "<!-- settings table: generated from QuiverConf, checked by SettingsSuite -->"
  private val TableEnd = "<!-- end of settings table -->"

  private def tuningGuide: String = {
    val root = sys.props.getOrElse("quiver.repo.root", "..")
    new String(Files.readAllBytes(Paths.get(root, "docs", "tuning.md")), StandardCharsets.UTF_8)
  }

  test("QuiverSettings names every setting, and only those") {
    val named = QuiverSettings.getClass.getDeclaredMethods.toSeq
      .filter(m => m.getParameterCount == 0 && m.getReturnType == classOf[String])
      .map(_.invoke(QuiverSettings).asInstanceOf[String])
      .filter(_.startsWith("spark.quiver."))
      .toSet
    assert(named == QuiverConf.entries.map(_.key).toSet)
  }

  test("docs/tuning.md has the generated table of settings, up to date") {
    val guide = tuningGuide
    val begin = guide.indexOf(TableBegin)
    val end = guide.indexOf(TableEnd)
    assert(begin >= 0 && end > begin, s"docs/tuning.md lacks the markers $TableBegin ... $TableEnd")
    val table = guide.substring(begin + TableBegin.length, end).trim
    assert(
      table == QuiverConf.markdown,
      s"docs/tuning.md's settings table is out of date; replace it with:\n${QuiverConf.markdown}"
    )
  }

  test("docs/tuning.md explains every setting in a section of its own") {
    val sections = "(?m)^## `(spark\\.quiver\\.[^`]+)`".r
      .findAllMatchIn(tuningGuide)
      .map(_.group(1))
      .toList
    assert(sections == QuiverConf.entries.map(_.key).toList)
  }

  test("an executor-wide setting cannot be set in a session; a session setting can") {
    assert(QuiverConf.isExecutorWide(QuiverConf.MaxDecodedBroadcastBytes))
    val e = intercept[AnalysisException] {
      spark.conf.set(QuiverSettings.MaxDecodedBroadcastBytes, "1024")
    }
    assert(e.getMessage.contains(QuiverSettings.MaxDecodedBroadcastBytes))
    assert(!QuiverConf.isExecutorWide(QuiverConf.ShareDecodedBroadcasts))
    spark.conf.set(QuiverSettings.ShareDecodedBroadcasts, "false")
    try assert(!QuiverConf.shareDecodedBroadcasts(SQLConf.get))
    finally spark.conf.unset(QuiverSettings.ShareDecodedBroadcasts)
  }

  test("the plugin registers every setting when Spark starts, before any Quiver call") {
    // A JVM of its own: in this one, any suite may already have touched QuiverConf.
    val jvmFlags = ManagementFactory.getRuntimeMXBean.getInputArguments.toArray.toSeq
      .map(_.toString)
      .filter(a => a.startsWith("--add-opens") || a.startsWith("--add-exports"))
    val java = Paths.get(sys.props("java.home"), "bin", "java").toString
    val command = Seq(java, "-Xmx1g") ++ jvmFlags ++
      Seq("-cp", sys.props("java.class.path"), PluginStartCheck.getClass.getName.stripSuffix("$"))
    val output = File.createTempFile("quiver-plugin-check", ".txt")
    try {
      val process = new ProcessBuilder(command: _*)
        .redirectErrorStream(true)
        .redirectOutput(output)
        .start()
      assert(process.waitFor(5, TimeUnit.MINUTES), "the plugin check did not finish")
      val lines = new String(Files.readAllBytes(output.toPath), StandardCharsets.UTF_8)
      assert(process.exitValue() == 0, lines)
      val registered = lines.linesIterator
        .filter(_.startsWith(PluginStartCheck.Prefix))
        .map(_.stripPrefix(PluginStartCheck.Prefix))
        .toSet
      assert(registered == QuiverConf.entries.map(_.key).toSet, lines)
    } finally output.delete()
  }
}

/**
 * Starts Spark with Quiver's plugin and prints which of Quiver's keys Spark knows, before anything
 * else in this JVM touches Quiver. The keys are spelled out here, not read from Quiver, so that
 * printing them cannot register them.
 */
object PluginStartCheck {

  val Prefix = "registered: "

  def main(args: Array[String]): Unit = {
    val keys = Seq(
      "spark.quiver.broadcast.shareDecoded.enabled",
      "spark.quiver.broadcast.maxDecodedBytes",
      "spark.quiver.shuffle.codec",
      "spark.quiver.shuffle.zstd.level",
      "spark.quiver.shuffle.batchSize",
      "spark.quiver.shuffle.maxBlockBytes"
    )
    val spark = org.apache.spark.sql.SparkSession
      .builder()
      .master("local[1]")
      .appName("quiver-plugin-check")
      .config("spark.plugins", "dev.quiver.spark.QuiverPlugin")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .getOrCreate()
    try keys.filter(SQLConf.containsConfigKey).foreach(k => println(Prefix + k))
    finally spark.stop()
  }
}
