package org.apache.spark.sql.quiver

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

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
    val registered = RetainingExecutor.results.keySet
      .filter(_.startsWith("registered."))
      .map(_.stripPrefix("registered."))
    assert(registered == QuiverConf.entries.map(_.key).toSet, RetainingExecutor.results)
  }
}
