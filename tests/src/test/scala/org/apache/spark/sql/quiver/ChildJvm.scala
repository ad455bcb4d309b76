package org.apache.spark.sql.quiver

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}
import java.util.concurrent.TimeUnit

import com.codahale.metrics.Gauge
import dev.quiver.spark.QuiverSettings
import org.apache.spark.SparkEnv
import org.apache.spark.sql.SparkSession

/**
 * Runs a main class in a JVM of its own, on this JVM's class path and module flags: for checks that
 * need a Spark started with other static settings, or a JVM in which nothing touched Quiver yet.
 */
object ChildJvm {

  /** Lines the child prints as `key=value` results (the rest is Spark's log). */
  val ResultPrefix = "quiver-result: "

  /** The child's `key -> value` results; fails with the child's output if it fails. */
  def results(main: Class[_], args: String*): Map[String, String] =
    resultsOn(_ => true, Nil, main, args: _*)

  /**
   * [[results]] of a child whose class path keeps only the entries `keep` accepts, then `extra`:
   * for a child that must not see a jar of this JVM's (Comet's copy of Arrow's C Data classes, say)
   * and sees one this JVM does not.
   */
  def resultsOn(
      keep: String => Boolean,
      extra: Seq[String],
      main: Class[_],
      args: String*
  ): Map[String, String] = {
    val classPath =
      (sys.props("java.class.path").split(File.pathSeparator).filter(keep) ++ extra)
        .mkString(File.pathSeparator)
    val jvmFlags = ManagementFactory.getRuntimeMXBean.getInputArguments.toArray.toSeq
      .map(_.toString)
      .filter(a => a.startsWith("--add-opens") || a.startsWith("--add-exports"))
    val java = Paths.get(sys.props("java.home"), "bin", "java").toString
    val command = Seq(java, "-Xmx1g") ++ jvmFlags ++
      Seq("-cp", classPath, main.getName.stripSuffix("$")) ++ args
    val output = File.createTempFile("quiver-child-jvm", ".txt")
    try {
      val process = new ProcessBuilder(command: _*)
        .redirectErrorStream(true)
        .redirectOutput(output)
        .start()
      if (!process.waitFor(5, TimeUnit.MINUTES)) {
        process.destroyForcibly()
        throw new IllegalStateException(s"${main.getName} did not finish in 5 minutes")
      }
      val lines = new String(Files.readAllBytes(output.toPath), StandardCharsets.UTF_8)
      if (process.exitValue() != 0) {
        throw new IllegalStateException(s"${main.getName} failed:\n$lines")
      }
      lines.linesIterator
        .filter(_.startsWith(ResultPrefix))
        .map(_.stripPrefix(ResultPrefix).split("=", 2))
        .map(kv => kv(0) -> kv(1))
        .toMap
    } finally output.delete()
  }

  /** Prints one result for [[results]] to read. */
  def report(key: String, value: Any): Unit = println(s"$ResultPrefix$key=$value")

  /**
   * A child's local Spark with Quiver's plugin and retention on. No cleaner removes Spark's own
   * blocks (old jobs' task binaries) in the background: the children compare Spark's storage
   * memory with its block list, two reads that a removal between them would set apart (seen on
   * Spark 3.4: 7,186 bytes more than Quiver took).
   */
  def retainingSpark(master: String, appName: String): SparkSession =
    SparkSession
      .builder()
      .master(master)
      .appName(appName)
      .config("spark.plugins", QuiverSettings.Plugin)
      .config(QuiverSettings.RetainDecodedBroadcasts, "true")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.cleaner.referenceTracking", "false")
      .getOrCreate()

  /** On-heap storage memory not held by Spark's own blocks: what Quiver took. */
  def quiverStorage: Long = {
    val blocks = SparkEnv.get.blockManager
    SparkEnv.get.memoryManager.onHeapStorageMemoryUsed -
      blocks.getMatchingBlockIds(_ => true).flatMap(blocks.getStatus).map(_.memSize).sum
  }

  /** The value of the plugin's gauge `name` in this JVM's metrics system; -1 if it has none. */
  def pluginGauge(name: String): Long = {
    val source = "plugin." + QuiverSettings.Plugin
    val values = SparkEnv.get.metricsSystem.getSourcesByName(source).flatMap { s =>
      Option(s.metricRegistry.getGauges.get(name))
        .map(_.asInstanceOf[Gauge[java.lang.Long]].getValue.longValue)
    }
    values.headOption.getOrElse(-1L)
  }
}
