package dev.quiver.examples

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import org.apache.spark.sql.functions.broadcast
import org.apache.spark.sql.quiver.{ApiSurface, QuiverRuntime, QuiverSparkSession}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The guides' code: every Scala and Java block of `docs/joins.md`, `docs/shuffle.md` and
 * `docs/engines.md` is a
 * region of an example in this package (which sees only Quiver's API, so the compiler proves the
 * examples use nothing internal), the examples run and give Spark's answers, and no code block of
 * any guide imports something internal.
 */
class DocExamplesSuite extends AnyFunSuite with QuiverSparkSession {

  private val root = new File(sys.props.getOrElse("quiver.repo.root", ".."))

  private def read(path: String): String =
    new String(Files.readAllBytes(Paths.get(root.getPath, path)), StandardCharsets.UTF_8)

  /** The Scala and Java code blocks of a guide, each without its fence. */
  private def codeBlocks(guide: String): Seq[String] =
    "(?s)```(?:scala|java)\n(.*?)```".r.findAllMatchIn(read(guide)).map(_.group(1)).toSeq

  /** The regions of the example sources marked for `guide`, dedented. */
  private def exampleRegions(guide: String): Seq[String] = {
    val sources =
      Seq(
        "tests/src/test/scala/dev/quiver/examples",
        "tests/src/test/java/dev/quiver/examples",
        // The native consumer's, where the class path has the one arrow-c-data of its Arrow.
        "common/src/test/java/dev/quiver/examples"
      )
        .flatMap(dir => Option(new File(root, dir).listFiles()).toSeq.flatten)
        .filter(f => f.getName.endsWith("Example.scala") || f.getName.endsWith("Example.java"))
    val marker = java.util.regex.Pattern.quote(guide)
    val region = s"(?s)// $marker: begin\n(.*?)\n[ \t]*// $marker: end".r
    sources
      .flatMap(f => region.findAllMatchIn(read(root.toPath.relativize(f.toPath).toString)))
      .map(m => dedent(m.group(1)))
  }

  private def dedent(text: String): String = {
    val lines = text.split("\n", -1).toSeq
    val indent = lines.filter(_.trim.nonEmpty).map(_.takeWhile(_ == ' ').length).min
    lines.map(_.drop(indent)).mkString("\n") + "\n"
  }

  for (guide <- Seq("docs/joins.md", "docs/shuffle.md", "docs/engines.md"))
    test(s"every code block of $guide is an example region, and every region is in the guide") {
      val blocks = codeBlocks(guide)
      val regions = exampleRegions(guide)
      assert(blocks.nonEmpty)
      assert(blocks.filterNot(regions.contains).isEmpty, "blocks without an example")
      assert(regions.filterNot(blocks.contains).isEmpty, "examples the guide does not show")
    }

  test("no guide's code imports anything but Quiver's API") {
    val guides = Option(new File(root, "docs").listFiles()).toSeq.flatten
      .filter(_.getName.endsWith(".md"))
      .map(f => "docs/" + f.getName) :+ "README.md"
    val imports = for {
      guide <- guides
      block <- codeBlocks(guide)
      line <- block.split("\n").toSeq.map(_.trim) if line.startsWith("import ")
    } yield guide -> line.stripPrefix("import ").stripSuffix(";")
    assert(imports.exists(_._2.startsWith("dev.quiver.")))
    val bad = imports.filter { case (_, imported) =>
      imported.startsWith("org.apache.spark.sql.quiver") ||
      (imported.startsWith("dev.quiver.") && !importedNames(imported).forall(
        ApiSurface.isPublicApi
      ))
    }
    assert(bad.isEmpty, "imports of internals")
  }

  /** `a.b.{C, D}` as `a.b.C`, `a.b.D`; `a.b.C` as itself. */
  private def importedNames(imported: String): Seq[String] = {
    val brace = imported.indexOf('{')
    if (brace < 0) Seq(imported)
    else {
      val prefix = imported.substring(0, brace)
      imported
        .substring(brace + 1, imported.indexOf('}'))
        .split(",")
        .toSeq
        .map(n => prefix + n.trim)
    }
  }

  test("the joins example gives Spark's answers") {
    val results = JoinsExample.run(spark)
    val orders = spark
      .range(0, 4000, 1, 8)
      .selectExpr(
        "id AS order_id",
        "CASE WHEN id % 50 = 0 THEN NULL ELSE id % 1200 END AS customer_id"
      )
    val customers = spark.range(0, 1000).selectExpr("id AS id")
    val on = orders("customer_id") === customers("id")
    assert(results.unknownCustomers == orders.join(broadcast(customers), on, "left_anti").count())
    assert(results.innerMatches == orders.join(broadcast(customers), on, "inner").count())
    assert(results.perTaskRows == results.innerMatches)
    assert(results.broadcastRows == 1000)
    assert(
      results.nullAwareAnti == orders
        .where("customer_id IS NOT NULL AND customer_id >= 1000")
        .count()
    )
    val semi =
      orders.join(broadcast(customers), orders("customer_id") < customers("id"), "left_semi")
    assert(results.semiMatches == semi.count())
  }

  test("the Java joins example gives Spark's answer") {
    val orders = spark.range(0, 1000, 1, 4).selectExpr("id % 120 AS customer_id")
    val customers = spark.range(0, 100).selectExpr("id AS id")
    val expected =
      orders.join(broadcast(customers), orders("customer_id") === customers("id")).count()
    assert(JavaJoinExample.run(spark) == expected)
  }

  test("the shuffle example moves every row to the partition Spark would") {
    val (rowsPerPartition, blocks) = ShuffleExample.run(spark)
    val df = spark.range(0, 100000, 1, 4).selectExpr("id % 1000 AS customer")
    val spark8 =
      df.repartition(8, df("customer")).rdd.mapPartitions(rows => Iterator(rows.size.toLong))
    assert(rowsPerPartition.toSeq == spark8.collect().toSeq)
    assert(blocks.nonEmpty && blocks.forall(_._2 > 0))
  }

  test("the engines examples read an engine's broadcast through the cache") {
    val cache = QuiverRuntime.broadcastCache
    val builtBefore = cache.counters().derivedBuilds()
    val results = EnginesExample.run(spark)
    assert(results.jvmRowsPerTask == Seq.fill(4)(1000L))
    val tables = results.nativeTableBytesPerTask
    // Two 8-byte columns of 1,000 rows, decompressed: the table holds at least their values.
    assert(tables.size == 4 && tables.distinct.size == 1 && tables.head > 2 * 8 * 1000)
    val builds = cache.counters().derivedBuilds() - builtBefore
    assert(builds >= 1 && builds <= 4, s"$builds builds")
    assert(cache.snapshot().isEmpty, s"cache still holds ${cache.snapshot()}")
    assert(cache.counters().bytesHeld() == 0, "native bytes still counted")
  }

  test("the Java engine example reads every key in every task") {
    val sums = JavaEngineExample.run(spark)
    assert(sums.size == 4)
    sums.forEach(sum => assert(sum == 999L * 1000 / 2))
  }
}
