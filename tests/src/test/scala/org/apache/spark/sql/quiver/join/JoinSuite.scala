package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.quiver.QuiverRuntime
import dev.quiver.spark.broadcast.ArrowBroadcast
import dev.quiver.spark.join.QuiverJoins
import org.apache.spark.SPARK_VERSION
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.errors.QueryExecutionErrors
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.functions.{broadcast, col, lit}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.quiver.{
  BroadcastBuilder,
  QuiverConf,
  QuiverSparkSession,
  SparkRows,
  TaskAccumulables
}
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.sql.types.StructType
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * Quiver's broadcast joins give Spark's own answer, on eight probe tasks, with the decoded build
 * side shared between them and not, and leave nothing behind.
 */
class JoinSuite extends AnyFunSuite with QuiverSparkSession with BeforeAndAfterEach {

  import JoinSuite.Answer

  private val probeTasks = 8

  /** Keys 0 to 399, each about five times, some null; keys from 300 on match nothing. */
  private lazy val probe: DataFrame =
    spark
      .range(0, 2000, 1, probeTasks)
      .selectExpr(
        "CASE WHEN id % 17 = 0 THEN NULL ELSE id % 400 END AS pk",
        "CAST(id % 3 AS INT) AS pk2",
        "concat('p', id) AS ps",
        "id AS pid"
      )

  /** Keys 0 to 299, each about three times, some null; every type, with nulls in every column. */
  private lazy val build: DataFrame =
    spark
      .range(0, 900, 1, 3)
      .selectExpr(
        "CASE WHEN id % 13 = 0 THEN NULL ELSE id % 300 END AS bk",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE id % 3 END AS bk2",
        "CASE WHEN id % 5 = 0 THEN NULL ELSE concat('s-', id) END AS s",
        "CASE WHEN id % 29 = 0 THEN NULL ELSE named_struct('x', CAST(id AS INT), 'y', " +
          "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS STRING) END, 'z', array(id, NULL)) " +
          "END AS st",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE array(id, id + 1, NULL) END AS arr",
        "CASE WHEN id % 19 = 0 THEN NULL ELSE map(concat('k', id % 4), " +
          "CASE WHEN id % 2 = 0 THEN NULL ELSE id END) END AS m",
        "CASE WHEN id % 23 = 0 THEN NULL ELSE array(named_struct('a', id, 'b', 's')) END AS nested",
        "CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(id / 3 AS DECIMAL(12, 2)) END AS dec",
        "CASE WHEN id % 8 = 0 THEN NULL ELSE CAST(id * 1000003 AS DECIMAL(30, 5)) END AS bigdec",
        "CASE WHEN id % 9 = 0 THEN NULL ELSE date_add(DATE'2020-01-01', CAST(id AS INT)) END AS d",
        "CASE WHEN id % 10 = 0 THEN NULL ELSE timestamp_seconds(id * 1000) END AS ts",
        "CASE WHEN id % 12 = 0 THEN NULL ELSE CAST(concat('b', id) AS BINARY) END AS bin",
        "CASE WHEN id % 14 = 0 THEN NULL ELSE id % 2 = 0 END AS flag",
        "CASE WHEN id % 15 = 0 THEN NULL ELSE CAST(id % 100 AS TINYINT) END AS tiny",
        "CASE WHEN id % 16 = 0 THEN NULL ELSE CAST(id % 30000 AS SMALLINT) END AS small",
        "CASE WHEN id % 18 = 0 THEN NULL ELSE CAST(id / 7 AS FLOAT) END AS f",
        "CASE WHEN id % 20 = 0 THEN NULL ELSE id / 7 END AS dbl"
      )

  /** Spark's answer for a hash join of `probe` and `build` on pk = bk. */
  private def sparkHashJoin(joinType: String): DataFrame =
    if (joinType == "right_outer") {
      broadcast(build).join(probe, build("bk") === probe("pk"), joinType)
    } else probe.join(broadcast(build), probe("pk") === build("bk"), joinType)

  private lazy val nestedLoopCondition: Column =
    probe("pk") >= build("bk") + 380 && (build("st.y").isNull || probe("pid") % 2 === 0)

  override def afterEach(): Unit = {
    spark.conf.unset(QuiverConf.ShareDecodedBroadcasts.key)
    super.afterEach()
  }

  private def answer(spark: DataFrame): Answer =
    Answer(spark.schema, SparkRows.sorted(spark.collect().toSeq))

  private def assertSameRows(quiver: DataFrame, expected: Answer): Unit = {
    assert(quiver.schema == expected.schema)
    assert(SparkRows.sorted(quiver.collect().toSeq) == expected.sortedRows)
  }

  private def assertSameRows(quiver: DataFrame, expected: DataFrame): Unit =
    assertSameRows(quiver, answer(expected))

  private def assertNothingLeft(): Unit = {
    val snapshot = QuiverRuntime.broadcastCache.snapshot()
    assert(snapshot.isEmpty, s"cache still holds $snapshot")
    assert(QuiverRuntime.allocator.getAllocatedMemory == 0)
  }

  /**
   * Runs `join` with sharing on or off, checks it against `expected`, and checks how the build
   * side was read and built. Spark's join reads it once on the driver while generating its code,
   * and once in each probe task: each read decoded and built alone (off), or shared one decode
   * and its one build with the reads that overlapped it (on; without retention, the driver's read
   * ends before the tasks start). The build side's SQL metrics count each read once, as the cache
   * does, and so does each task's update of them that Spark's listeners get.
   */
  private def checkJoin(share: Boolean, expected: Answer)(join: => DataFrame): Unit = {
    spark.conf.set(QuiverConf.ShareDecodedBroadcasts.key, share.toString)
    val counters = QuiverRuntime.broadcastCache.counters()
    val quiver = join
    val (decodes, shared, privately, derivedBuilds) =
      (
        counters.decodes(),
        counters.sharedReads(),
        counters.privateDecodes(),
        counters.derivedBuilds()
      )
    val (_, taskUpdates) =
      TaskAccumulables.during(spark.sparkContext, SharedBuilds.readMetricIds(quiver)) {
        assertSameRows(quiver, expected)
      }
    val reads = probeTasks + 1
    val builds = SharedBuilds.of(quiver)
    val figures = builds.reads
    val perTask = taskUpdates.perTask.map(SharedBuilds.taskReads(quiver, _))
    assert(figures.reads == reads)
    assert(figures.retained == 0, "retention is off in this session")
    assert(perTask.size == probeTasks)
    perTask.foreach(t => assert(t.reads == 1, s"a task's read counted $t"))
    assert(builds.built + builds.reused == reads)
    assert(counters.derivedBuilds() - derivedBuilds == builds.built)
    if (share) {
      assert(counters.privateDecodes() == privately)
      val sharedDecodes = counters.decodes() - decodes
      assert(sharedDecodes + counters.sharedReads() - shared == reads)
      assert(builds.built == sharedDecodes, "one build per decoded entry")
      assert(figures.decoded == sharedDecodes)
      assert(figures.shared == counters.sharedReads() - shared)
      assert(figures.decodedPrivately == 0)
      assert(figures.decodeNanos > 0)
      perTask.foreach(t => assert((t.decodeNanos > 0) == (t.decoded == 1), perTask))
    } else {
      assert(counters.privateDecodes() - privately == reads)
      assert(counters.decodes() == decodes)
      assert(builds.built == reads)
      assert(figures.decodedPrivately == reads)
      perTask.foreach(t => assert(t.decodedPrivately == 1 && t.decodeNanos > 0, perTask))
    }
    assertNothingLeft()
  }

  for (joinType <- Seq("inner", "left_outer", "left_semi", "left_anti", "right_outer")) {
    lazy val expected = answer(sparkHashJoin(joinType))
    for (share <- Seq(true, false))
      test(s"$joinType hash join gives Spark's rows, sharing ${if (share) "on" else "off"}") {
        checkJoin(share, expected) {
          QuiverJoins.broadcastHashJoin(probe, build, Seq("pk"), Seq("bk"), joinType)
        }
      }
  }

  for (joinType <- Seq("inner", "left_outer", "left_semi", "left_anti")) {
    lazy val expected = answer(probe.join(broadcast(build), nestedLoopCondition, joinType))
    for (share <- Seq(true, false))
      test(
        s"$joinType nested loop join gives Spark's rows, sharing ${if (share) "on" else "off"}"
      ) {
        checkJoin(share, expected) {
          QuiverJoins.broadcastNestedLoopJoin(probe, build, nestedLoopCondition, joinType)
        }
      }
  }

  test("the join is Spark's broadcast join over a Quiver build side; both sides are pruned") {
    val dir = java.nio.file.Files.createTempDirectory("quiver-probe").resolve("probe").toString
    probe.write.parquet(dir)
    try {
      val parquetProbe = spark.read.parquet(dir)
      val joined = QuiverJoins
        .broadcastHashJoin(parquetProbe, build, Seq("pk"), Seq("bk"), "inner")
        .where("pid > 100 AND s IS NOT NULL")
        .select("pid", "s")
      val plan = joined.queryExecution.executedPlan.toString
      assert(plan.contains("BroadcastHashJoin"), plan)
      assert(plan.contains("QuiverSharedBuild"), plan)
      assert(!plan.contains("BroadcastExchange"), plan)
      // Only the probe columns the query reads, and the filter pushed into the scan.
      assert(plan.contains("ReadSchema: struct<pk:bigint,pid:bigint>"), plan)
      assert(plan.contains("GreaterThan(pid,100)"), plan)
      // Only the build columns it reads, the filter above the join applied to the build side.
      val buildSide = joined.queryExecution.executedPlan.collect { case b: SharedBuildExec => b }
      assert(buildSide.map(_.output.map(_.name)) == Seq(Seq("bk", "s")))
      assert(buildSide.head.filters.exists(_.sql.contains("s IS NOT NULL")), buildSide)
      val expected = parquetProbe
        .join(broadcast(build), parquetProbe("pk") === build("bk"))
        .where("pid > 100 AND s IS NOT NULL")
        .select("pid", "s")
      assertSameRows(joined, expected)
      assert(SharedBuilds.of(joined).built >= 1)
    } finally
      org.apache.commons.io.FileUtils.deleteDirectory(new java.io.File(dir).getParentFile)
    assertNothingLeft()
  }

  test("a hash and a nested loop join of one broadcast, in the same tasks, build two sides") {
    val broadcastBuild = ArrowBroadcast.of(build)
    // Both read only column bk, unfiltered: they differ in how Spark wants it broadcast.
    val unmatched =
      QuiverJoins.broadcastHashJoin(probe, broadcastBuild, Seq("pk"), Seq("bk"), "left_anti")
    val aboveEveryKey =
      QuiverJoins.broadcastNestedLoopJoin(
        unmatched,
        broadcastBuild,
        col("pk") <= col("bk"),
        "left_anti"
      )
    val expected = probe
      .join(broadcast(build), probe("pk") === build("bk"), "left_anti")
      .join(broadcast(build), col("pk") <= build("bk"), "left_anti")
    assertSameRows(aboveEveryKey, expected)
    val builds = SharedBuilds.of(aboveEveryKey)
    assert(builds.nodes == 2)
    assert(builds.built + builds.reused == 2 * (probeTasks + 1))
    assertNothingLeft()
    broadcastBuild.value.destroy()
  }

  test("a Quiver broadcast outside a join Quiver plans is read by a scan of its rows") {
    val broadcastBuild = ArrowBroadcast.of(build)
    val relation = org.apache.spark.sql.quiver.shim.SparkShims.get
      .dataFrameOf(spark, QuiverBroadcastRelation(broadcastBuild, shareDecoded = true))
    SharedBuildStrategy.install(spark)
    assert(relation.queryExecution.executedPlan.toString.contains("QuiverBroadcastScan"))
    assertSameRows(relation, build)
    // Its one task decoded the broadcast, which nothing else read.
    val scans = relation.queryExecution.executedPlan.collect { case s: BroadcastScanExec => s }
    assert(scans.size == 1)
    val read = SharedBuilds.readFigures(key => scans.head.metrics(key).value)
    assert(read.reads == 1 && read.decoded == 1 && read.decodeNanos > 0, read)
    assertNothingLeft()
    broadcastBuild.value.destroy()
  }

  test("under adaptive query execution too") {
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    try {
      val joined =
        QuiverJoins.broadcastHashJoin(probe, build, Seq("pk"), Seq("bk"), "left_outer")
      assertSameRows(joined, sparkHashJoin("left_outer"))
      assert(joined.queryExecution.executedPlan.isInstanceOf[AdaptiveSparkPlanExec])
      assert(SharedBuilds.of(joined).nodes == 1)
    } finally spark.conf.unset("spark.sql.adaptive.enabled")
    assertNothingLeft()
  }

  test("several keys, of types Spark coerces to one another (int and bigint)") {
    for (joinType <- Seq("inner", "left_anti")) {
      val expected = probe.join(
        broadcast(build),
        probe("pk") === build("bk") && probe("pk2") === build("bk2"),
        joinType
      )
      assertSameRows(
        QuiverJoins.broadcastHashJoin(probe, build, Seq("pk", "pk2"), Seq("bk", "bk2"), joinType),
        expected
      )
    }
    assertNothingLeft()
  }

  test("floating point and nested keys match as in Spark: NaN = NaN, -0.0 = 0.0") {
    def side(values: String, partitions: Int): DataFrame =
      spark
        .range(0, 8, 1, partitions)
        .selectExpr(s"element_at(array($values), CAST(id AS INT) + 1) AS v", "id")
        .selectExpr(
          "v",
          "named_struct('a', v, 'b', CASE WHEN id % 3 = 0 THEN NULL ELSE 'x' END) AS st",
          "CASE WHEN id = 5 THEN NULL ELSE array(v, NULL) END AS arr",
          "id"
        )
    val nan = "CAST('NaN' AS DOUBLE)"
    val left = side(s"$nan, -0.0D, 0.0D, 1.5D, NULL, 2.5D, $nan, 0.0D", probeTasks)
    val right = side(s"0.0D, $nan, -0.0D, NULL, 1.5D, 3.5D, 0.0D, $nan", 2)
    val broadcastRight = ArrowBroadcast.of(right)
    for ((key, joinType) <- Seq("v" -> "inner", "st" -> "left_anti", "arr" -> "inner")) {
      val expected = left.join(broadcast(right), left(key) === right(key), joinType)
      val quiver =
        QuiverJoins.broadcastHashJoin(left, broadcastRight, Seq(key), Seq(key), joinType)
      assert(quiver.schema == expected.schema)
      // By string: NaN is not equal to itself in Scala.
      assert(
        quiver.collect().map(_.toString).sorted.toSeq ==
          expected.collect().map(_.toString).sorted.toSeq,
        s"$joinType join on $key"
      )
    }
    assertNothingLeft()
    broadcastRight.value.destroy()
  }

  test("null-aware anti join gives Spark's NOT IN: none if a build key is null, all if empty") {
    probe.createOrReplaceTempView("quiver_probe")
    val builds = Seq(
      "with null keys" -> build,
      "without null keys" -> build.where("bk IS NOT NULL"),
      "empty" -> build.where("bk < 0")
    )
    for ((name, b) <- builds) {
      b.createOrReplaceTempView("quiver_build")
      val expected =
        spark.sql("SELECT * FROM quiver_probe WHERE pk NOT IN (SELECT bk FROM quiver_build)")
      val quiver = QuiverJoins.broadcastNullAwareAntiJoin(probe, b, "pk", "bk")
      assert(quiver.schema == expected.schema, name)
      val rows = quiver.collect().toSeq
      assert(SparkRows.sorted(rows) == SparkRows.sorted(expected.collect().toSeq), name)
      name match {
        case "with null keys" => assert(rows.isEmpty)
        case "empty" => assert(rows.size == 2000)
        case _ => assert(rows.nonEmpty && rows.forall(!_.isNullAt(0)))
      }
    }
    spark.catalog.dropTempView("quiver_probe")
    spark.catalog.dropTempView("quiver_build")
    assertNothingLeft()
  }

  test("an empty build side") {
    val empty = build.where("bk < 0")
    val broadcastEmpty = ArrowBroadcast.of(empty)
    assert(broadcastEmpty.rows == 0)
    for (joinType <- Seq("inner", "left_outer", "left_semi", "left_anti", "right_outer")) {
      val expected =
        if (joinType == "right_outer") {
          broadcast(empty).join(probe, empty("bk") === probe("pk"), joinType)
        } else probe.join(broadcast(empty), probe("pk") === empty("bk"), joinType)
      assertSameRows(
        QuiverJoins.broadcastHashJoin(probe, broadcastEmpty, Seq("pk"), Seq("bk"), joinType),
        expected
      )
    }
    assertSameRows(
      QuiverJoins.broadcastNestedLoopJoin(probe, empty, probe("pk") > empty("bk"), "left_outer"),
      probe.join(broadcast(empty), probe("pk") > empty("bk"), "left_outer")
    )
    assertNothingLeft()
    broadcastEmpty.value.destroy()
  }

  test("a zero-column build side (count(*)-shaped) keeps its row count") {
    val zeroColumns = spark.range(0, 3, 1, 2).select()
    val onProbe = probe("pid") % 7 === 0
    for (joinType <- Seq("inner", "left_outer", "left_semi", "left_anti"))
      assertSameRows(
        QuiverJoins.broadcastNestedLoopJoin(probe, zeroColumns, onProbe, joinType),
        probe.join(broadcast(zeroColumns), onProbe, joinType)
      )
    val cross = QuiverJoins.broadcastNestedLoopJoin(probe, zeroColumns, lit(true), "cross")
    assertSameRows(cross, probe.crossJoin(broadcast(zeroColumns)))
    assert(cross.count() == 3 * 2000)
    assertNothingLeft()
  }

  test("a build side of several source partitions is coalesced into one batch") {
    val broadcastBuild = ArrowBroadcast.of(build)
    assert(build.rdd.getNumPartitions == 3)
    assert(broadcastBuild.coalesced)
    assert(broadcastBuild.inputBatches >= 3)
    assert(broadcastBuild.rows == 900)
    assert(broadcastBuild.value.value.length == 1)
    assertSameRows(
      QuiverJoins.broadcastHashJoin(probe, broadcastBuild, Seq("pk"), Seq("bk"), "left_outer"),
      sparkHashJoin("left_outer")
    )
    assertNothingLeft()
    broadcastBuild.value.destroy()
  }

  test("a build side whose streams carry dictionaries is read as it is, not coalesced") {
    val streams = DictionaryStreams.encode(spark)
    val broadcastBuild =
      ArrowBroadcast.ofStreams(spark, DictionaryStreams.schema(spark), streams)
    assert(!broadcastBuild.coalesced)
    assert(broadcastBuild.value.value.length == 2)
    assert(broadcastBuild.rows == DictionaryStreams.rows)
    val equivalent = DictionaryStreams.asDataFrame(spark)
    for ((share, joinType) <- Seq(true -> "inner", false -> "left_outer")) {
      spark.conf.set(QuiverConf.ShareDecodedBroadcasts.key, share.toString)
      assertSameRows(
        QuiverJoins.broadcastHashJoin(probe, broadcastBuild, Seq("pk"), Seq("k"), joinType),
        probe.join(broadcast(equivalent), probe("pk") === equivalent("k"), joinType)
      )
    }
    val condition = probe("pk") === col("k") + 1 && col("color") =!= "red"
    assertSameRows(
      QuiverJoins.broadcastNestedLoopJoin(probe, broadcastBuild, condition, "left_outer"),
      probe.join(
        broadcast(equivalent),
        probe("pk") === equivalent("k") + 1 && equivalent("color") =!= "red",
        "left_outer"
      )
    )
    assertNothingLeft()
    broadcastBuild.value.destroy()
  }

  test("a build side at Spark's broadcast limits fails with Spark's error") {
    val maxBytes = BroadcastBuilder.maxTableBytes(SQLConf.get)
    val within = BroadcastBuilder.build(build, maxRows = 901, maxBytes = maxBytes)
    assert(within.rows == 900)
    val bytes = within.bytes
    within.value.destroy()

    val tooManyRows = intercept[Throwable] {
      BroadcastBuilder.build(build, maxRows = 900, maxBytes = maxBytes)
    }
    val rowsError = QueryExecutionErrors.cannotBroadcastTableOverMaxTableRowsError(900, 900)
    assert(tooManyRows.getClass == rowsError.getClass)
    assert(tooManyRows.getMessage == rowsError.getMessage)

    val tooManyBytes = intercept[Throwable] {
      BroadcastBuilder.build(build, maxRows = BroadcastBuilder.MaxTableRows, maxBytes = bytes)
    }
    val bytesError = QueryExecutionErrors.cannotBroadcastTableOverMaxTableBytesError(bytes, bytes)
    assert(tooManyBytes.getClass == bytesError.getClass)
    assert(tooManyBytes.getMessage == bytesError.getMessage)
    assertNothingLeft()
  }

  test("the byte limit is spark.sql.maxBroadcastTableSize where Spark reads it, else 8 GiB") {
    // Spark 4.1 added the setting; 3.4 to 4.0 have a fixed 8 GiB and ignore the key.
    val line = SparkShims.sparkLine(SPARK_VERSION).split('.').map(_.toInt)
    val configurable = line(0) > 4 || (line(0) == 4 && line(1) >= 1)
    assert(BroadcastBuilder.maxTableBytes(SQLConf.get) == 8L << 30)
    val bytes = {
      val within = BroadcastBuilder.build(build)
      try within.bytes
      finally within.value.destroy()
    }
    spark.conf.set(BroadcastBuilder.MaxTableSizeKey, bytes.toString)
    try {
      assert(BroadcastBuilder.maxTableBytes(SQLConf.get) == (if (configurable) bytes else 8L << 30))
      if (configurable) {
        val tooManyBytes = intercept[Throwable](BroadcastBuilder.build(build))
        val bytesError =
          QueryExecutionErrors.cannotBroadcastTableOverMaxTableBytesError(bytes, bytes)
        assert(tooManyBytes.getClass == bytesError.getClass)
        assert(tooManyBytes.getMessage == bytesError.getMessage)
      } else BroadcastBuilder.build(build).value.destroy()
    } finally spark.conf.unset(BroadcastBuilder.MaxTableSizeKey)
    assertNothingLeft()
  }

  test("join types a broadcast join cannot run are refused before anything is broadcast") {
    val full = intercept[IllegalArgumentException] {
      QuiverJoins.broadcastHashJoin(probe, build, Seq("pk"), Seq("bk"), "full_outer")
    }
    assert(full.getMessage.contains("full_outer"))
    assert(full.getMessage.contains("left_semi"))
    intercept[IllegalArgumentException] {
      QuiverJoins.broadcastNestedLoopJoin(probe, build, nestedLoopCondition, "right_outer")
    }
    intercept[IllegalArgumentException] {
      QuiverJoins.broadcastHashJoin(probe, build, Seq("pk", "pk2"), Seq("bk"), "inner")
    }
  }

  test("string keys of a collation that bytes do not compare are refused (Spark 4)") {
    assume(SPARK_VERSION.startsWith("4."), "collations arrived in Spark 4.0")
    val lowerCase = probe.selectExpr("ps COLLATE UTF8_LCASE AS c")
    val e = intercept[IllegalArgumentException] {
      QuiverJoins.broadcastHashJoin(lowerCase, lowerCase, Seq("c"), Seq("c"), "inner")
    }
    assert(e.getMessage.contains("collation"))
  }
}

object JoinSuite {

  /** What Spark's own join returned, collected once for the tests that share it. */
  final case class Answer(schema: StructType, sortedRows: Seq[Any])
}
