package dev.quiver.bench

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import javax.xml.parsers.DocumentBuilderFactory

import dev.quiver.build.RepoRoot
import org.scalatest.funsuite.AnyFunSuite

/**
 * `dev/bench` tells the truth: it runs the class the build names, and its usage (which
 * `dev/bench --help` prints) is [[BenchOptions.usage]], made from the options the parser takes.
 */
class BenchScriptSuite extends AnyFunSuite {

  private val root = RepoRoot.find()
  private val mainClass = BroadcastJoinBench.getClass.getName.stripSuffix("$")

  test("dev/bench --help prints BenchOptions' usage and names the class it runs") {
    val process = new ProcessBuilder("bash", "dev/bench", "--help")
      .directory(root)
      .redirectErrorStream(true)
      .start()
    val output = new String(process.getInputStream.readAllBytes(), UTF_8)
    assert(process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0, output)
    assert(
      output.contains(BenchOptions.usage),
      s"dev/bench's header is not BenchOptions.usage:\n$output"
    )
    assert(output.contains(mainClass), output)
  }

  test("the build runs BroadcastJoinBench for dev/bench") {
    val pom = DocumentBuilderFactory
      .newInstance()
      .newDocumentBuilder()
      .parse(new File(root, "tests/pom.xml"))
    assert(pom.getElementsByTagName("bench.main").item(0).getTextContent.trim == mainClass)
    val script = new String(Files.readAllBytes(new File(root, "dev/bench").toPath), UTF_8)
    assert(script.contains("exec:exec@bench"))
  }

  test("every option the usage lists parses, and an unknown or incomplete one is refused") {
    val options = BenchOptions.parse(
      Seq("--full", "--shapes", "10k-200,1m-32", "--rounds", "3", "--warmups", "1") ++
        Seq("--out", "o", "--data", "d")
    )
    assert(
      options.shapes == Seq(BenchOptions.FullShapes("10k-200"), BenchOptions.FullShapes("1m-32"))
    )
    assert((options.rounds, options.warmups) == ((3, 1)))
    assert(options.out == new File("o") && options.data == new File("d", "full"))
    val quick = BenchOptions.parse(Seq("--quick"))
    assert(quick.rounds == 1 && quick.data == new File("bench-data", "quick"))
    val onCluster = BenchOptions.parse(Seq("--master", "spark://127.0.0.1:7077"))
    assert(onCluster.master.contains("spark://127.0.0.1:7077") && onCluster.sections == Seq("join"))
    val readOnCluster = intercept[IllegalArgumentException](
      BenchOptions.parse(Seq("--master", "spark://127.0.0.1:7077", "--sections", "read"))
    )
    assert(readOnCluster.getMessage.contains("--master runs the join section only"))
    assert(BenchOptions.parse(Nil).sections == BenchOptions.Sections)
    val tpch = BenchOptions.parse(Seq("--workload", "tpch", "--quick"))
    assert(tpch.workload == BenchOptions.TpchWorkload && tpch.scale == BenchOptions.TpchQuickScale)
    assert(tpch.data == new File("bench-data/tpch/sf0.01") && tpch.rounds == 1)
    val tpchFull = BenchOptions.parse(Seq("--workload", "tpch", "--scale", "10"))
    assert(tpchFull.scaleName == "10" && tpchFull.data == new File("bench-data/tpch/sf10"))
    assert((tpchFull.rounds, tpchFull.warmups) == ((BenchOptions.TpchRounds, 1)))
    val scaleOfJoin = intercept[IllegalArgumentException](BenchOptions.parse(Seq("--scale", "1")))
    assert(scaleOfJoin.getMessage.contains("--scale is TPC-H's"))
    val unknownWorkload =
      intercept[IllegalArgumentException](BenchOptions.parse(Seq("--workload", "tpcx")))
    assert(unknownWorkload.getMessage.contains("unknown workload tpcx; known: join, tpch"))
    val flags = Seq("--quick", "--full", "--shapes", "--rounds", "--warmups", "--out", "--data") ++
      Seq("--workload", "--scale")
    for (flag <- flags :+ "--master")
      assert(BenchOptions.usage.contains(s"[$flag"), s"$flag is missing from the usage")

    val unknown = intercept[IllegalArgumentException](BenchOptions.parse(Seq("--rows", "5")))
    assert(unknown.getMessage.contains("unknown option '--rows'"))
    assert(unknown.getMessage.contains(BenchOptions.usage))
    val incomplete = intercept[IllegalArgumentException](BenchOptions.parse(Seq("--rounds")))
    assert(incomplete.getMessage.contains("option '--rounds' needs N"))
  }
}
