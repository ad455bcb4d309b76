package dev.quiver.bench

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import org.apache.spark.sql.quiver.DefaultLineOnly

/**
 * The main job (`dev/bench`'s class) run in a JVM of its own on this test class path, as the
 * script runs it, for the suites that check what it reports.
 */
object MainJobProcess {

  final case class Result(finished: Boolean, exitValue: Int, output: String)

  /**
   * Why the main job does not run on this build, if it does not: `dev/bench` runs on the default
   * profile's build only; the other builds compile its code.
   */
  def notThisBuild: Option[String] = DefaultLineOnly.skipReason("the main job")

  /** Runs the main job with `args`, its output logged in `work`, for at most `minutes`. */
  def run(args: Seq[String], work: File, minutes: Int): Result = {
    val java = new File(new File(sys.props("java.home"), "bin"), "java").getPath
    val jvmArgs = sys.props.getOrElse("quiver.test.jvm.args", "").split("\\s+").filter(_.nonEmpty)
    val command = Seq(java, "-Xmx2g") ++ jvmArgs ++
      Seq(
        "-cp",
        sys.props("java.class.path"),
        BroadcastJoinBench.getClass.getName.stripSuffix("$")
      ) ++
      args
    val log = new File(work, "bench.log")
    val process =
      new ProcessBuilder(command: _*).redirectErrorStream(true).redirectOutput(log).start()
    val finished = process.waitFor(minutes.toLong, TimeUnit.MINUTES)
    if (!finished) process.destroyForcibly().waitFor()
    val output = new String(Files.readAllBytes(log.toPath), StandardCharsets.UTF_8)
    Result(finished, if (finished) process.exitValue() else -1, output)
  }

  /** A CSV the main job wrote: its header's names, and each row's values by them. */
  def csvRows(file: File): Seq[Map[String, String]] = {
    val lines = Files.readAllLines(file.toPath).toArray.toSeq.map(_.toString)
    val header = lines.head.split(",").toSeq
    lines.drop(1).map(line => header.zip(line.split(",", -1).toSeq).toMap)
  }
}
