package org.apache.spark.sql.comet.quiver

import java.nio.ByteBuffer
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import dev.quiver.bench.CometJoin
import dev.quiver.codec.SparkStreamCodec
import dev.quiver.ipc.ArrowIpc
import org.apache.arrow.memory.RootAllocator
import dev.quiver.spark.{QuiverMetrics, QuiverSettings}
import org.apache.spark.SparkException
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.comet.CometBroadcastValue
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.quiver.{QuiverRuntime, QuiverSparkSession, SparkRows}
import org.apache.spark.util.io.ChunkedByteBuffer
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * Comet 1.2.0 on Quiver: Comet's native broadcast hash joins, planned and run by Comet, their build
 * sides read through Quiver's executor cache by `QuiverCometExtensions`. One SparkContext of its own
 * (Comet needs Spark's off-heap mode, a static setting), with retention, four task slots and a
 * probe side of eight Parquet files: two waves of tasks per query, each of which Comet alone would
 * decode the broadcast for.
 */
class CometOnQuiverSuite extends AnyFunSuite with BeforeAndAfterAll {

  private var session: SparkSession = _

  private lazy val spark: SparkSession = {
    assume(CometJoin.unavailable(None).isEmpty, CometJoin.unavailable(None).getOrElse(""))
    QuiverSparkSession.discard()
    val builder = SparkSession.builder().master("local[4]").appName("comet-on-quiver")
    CometJoin.sessionConfig.foreach { case (key, value) => builder.config(key, value) }
    session = builder
      .config("spark.sql.extensions", CometJoin.ExtensionsOnQuiver)
      .config("spark.plugins", QuiverSettings.Plugin)
      .config(QuiverSettings.RetainDecodedBroadcasts, "true")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.session.timeZone", "UTC")
      .config("spark.sql.autoBroadcastJoinThreshold", "-1")
      // Comet's shuffle stays off (CometJoin's setting) but for the dictionary test, which needs
      // Comet's shuffle manager: it hands every other shuffle to Spark's own.
      .config("spark.shuffle.manager", CometShuffleManager)
      .getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    writeTables(session)
    session
  }

  private val CometShuffleManager =
    "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager"

  private lazy val dataDir = Files.createTempDirectory("comet-on-quiver")

  /** fact: 8 files of 2,000 rows, keys 0 to 599 (some without a match); dim: keys 0 to 499. */
  private def writeTables(spark: SparkSession): Unit = {
    spark
      .range(0, 16000, 1, 8)
      .selectExpr("id % 600 AS key", "id AS f_long", "concat('f', id % 13) AS f_str")
      .write
      .parquet(dataDir.resolve("fact").toString)
    spark
      .range(0, 500, 1, 1)
      .selectExpr(
        "id AS k",
        "id * 3 AS d_long",
        "concat('segment-', id % 7) AS d_str",
        "IF(id % 5 = 0, NULL, id) AS d_nullable"
      )
      .write
      .parquet(dataDir.resolve("dim").toString)
    spark.read.parquet(dataDir.resolve("fact").toString).createOrReplaceTempView("fact")
    spark.read.parquet(dataDir.resolve("dim").toString).createOrReplaceTempView("dim")
  }

  override def afterAll(): Unit =
    try
      if (session != null) {
        try {
          session.stop()
          assert(QuiverMetrics.broadcastCacheEntries.isEmpty)
          assert(QuiverRuntime.allocator.getAllocatedMemory == 0)
        } finally org.apache.spark.util.Utils.deleteRecursively(dataDir.toFile)
      }
    finally super.afterAll()

  /**
   * The join types Comet 1.2.0 runs as a native broadcast hash join, the build side `d`: on the
   * right, and on the left for the one join Spark builds there (a right outer join).
   */
  private val joinTypes = Seq("INNER", "LEFT OUTER", "LEFT SEMI", "LEFT ANTI", "RIGHT OUTER")

  private def query(joinType: String): String = {
    val columns =
      if (joinType.contains("SEMI") || joinType.contains("ANTI")) "f.key, f.f_long, f.f_str"
      else "f.key, f.f_long, f.f_str, d.d_long, d.d_str, d.d_nullable"
    val tables =
      if (joinType == "RIGHT OUTER") s"dim d $joinType JOIN fact f"
      else s"fact f $joinType JOIN dim d"
    s"SELECT /*+ BROADCAST(d) */ $columns FROM $tables ON f.key = d.k"
  }

  private def withConf[T](settings: (String, String)*)(body: => T): T = {
    val before = settings.map { case (key, _) => key -> spark.conf.getOption(key) }
    settings.foreach { case (key, value) => spark.conf.set(key, value) }
    try body
    finally
      before.foreach {
        case (key, Some(value)) => spark.conf.set(key, value)
        case (key, None) => spark.conf.unset(key)
      }
  }

  private def rows(frame: DataFrame): Seq[Any] = SparkRows.sorted(frame.collect().toSeq)

  private def decodes: Long = {
    val counters = QuiverMetrics.broadcastCache
    counters.decodes() + counters.privateDecodes()
  }

  /** The plan that ran: with AQE, its final plan alone. */
  private def finalPlan(frame: DataFrame): SparkPlan = frame.queryExecution.executedPlan match {
    case adaptive: AdaptiveSparkPlanExec => adaptive.executedPlan
    case plan => plan
  }

  private def planOf(frame: DataFrame): String = finalPlan(frame).toString

  /** The plan's Quiver exchange, also inside an AQE query stage. */
  private def quiverExchange(plan: SparkPlan): Option[QuiverCometBroadcastExchangeExec] =
    plan.collectFirst {
      case exchange: QuiverCometBroadcastExchangeExec => Some(exchange)
      case stage: QueryStageExec => quiverExchange(stage.plan)
    }.flatten

  for {
    aqe <- Seq(false, true)
    joinType <- joinTypes
  }
    test(s"$joinType join through Quiver gives Spark's rows, AQE ${if (aqe) "on" else "off"}") {
      withConf("spark.sql.adaptive.enabled" -> aqe.toString) {
        val expected = withConf("spark.comet.enabled" -> "false")(rows(spark.sql(query(joinType))))
        val before = decodes
        val frame = spark.sql(query(joinType))
        val actual = rows(frame)
        val plan = planOf(frame)
        assert(plan.contains("CometBroadcastHashJoin"), plan)
        assert(plan.contains("QuiverCometBroadcastExchange"), plan)
        assert(!"(?s).*(?<!Quiver)CometBroadcastExchange.*".r.matches(plan), plan)
        assert(actual == expected)
        // Eight probe tasks on four slots: Comet alone decodes once per wave, Quiver once.
        assert(decodes - before == 1)
        // Every buffer lent to Comet was given back, and with the last one each task's hold.
        assert(QuiverCometBatchRDD.LendingAllocator.getAllocatedMemory == 0)
        assert(QuiverMetrics.broadcastCacheEntries.entries().asScala.forall(_.holders() == 0))
      }
    }

  test("turned off by its setting, the plan keeps Comet's own exchange and the same rows") {
    val expected = rows(spark.sql(query("INNER")))
    withConf(ReadCometBroadcastsThroughQuiver.EnabledKey -> "false") {
      val before = decodes
      val frame = spark.sql(query("INNER"))
      assert(rows(frame) == expected)
      val plan = planOf(frame)
      assert(plan.contains("CometBroadcastExchange") && !plan.contains("QuiverComet"), plan)
      assert(decodes == before)
    }
  }

  test("an exchange reused in one query is read through Quiver in both places") {
    val both = spark.sql(s"${query("INNER")} UNION ALL ${query("INNER")}")
    val single = rows(spark.sql(query("INNER")))
    val before = decodes
    val actual = rows(both)
    val plan = planOf(both)
    assert(plan.contains("ReusedExchange"), plan)
    assert(actual == (single ++ single).sortBy(_.toString))
    assert(decodes - before == 1)
  }

  /**
   * Comet's broadcasts carry dictionary batches when the build side comes straight from Comet's JVM
   * shuffle, which dictionary-encodes a string column whose values repeat more than
   * `spark.comet.shuffle.jvm.preferDictionary.ratio` times (10 by default; `d_str` has 7 distinct
   * values in 500 rows, 250 a partition here). Comet's native scans and operators hand on plain
   * strings.
   */
  for (aqe <- Seq(false, true))
    test(s"a Comet broadcast carrying dictionaries decodes once, AQE ${if (aqe) "on" else "off"}") {
      val dictionaryQuery =
        "SELECT /*+ BROADCAST(d) */ f.key, f.f_long, d.d_str FROM fact f LEFT OUTER JOIN " +
          "(SELECT k, d_str FROM dim DISTRIBUTE BY k) d ON f.key = d.k"
      withConf(
        "spark.sql.adaptive.enabled" -> aqe.toString,
        "spark.comet.shuffle.enabled" -> "true",
        "spark.comet.shuffle.mode" -> "jvm",
        "spark.sql.shuffle.partitions" -> "2"
      ) {
        val expected = withConf("spark.comet.enabled" -> "false")(rows(spark.sql(dictionaryQuery)))
        val before = decodes
        val frame = spark.sql(dictionaryQuery)
        val actual = rows(frame)
        val plan = planOf(frame)
        assert(plan.contains("CometBroadcastHashJoin") && plan.contains("CometColumnarExchange"))
        assert(actual == expected)
        assert(decodes - before == 1)
        assert(QuiverCometBatchRDD.LendingAllocator.getAllocatedMemory == 0)
        val streams =
          quiverExchange(finalPlan(frame)).get.executeBroadcast[CometBroadcastValue]().value.chunks
        val allocator = new RootAllocator()
        try {
          val carried = streams.map { chunks =>
            val decoded = ArrowIpc.decode(bytesOf(chunks), SparkStreamCodec.LZ4, allocator, "test")
            try decoded.hasDictionaries
            finally decoded.close()
          }
          assert(carried.contains(true), "no stream of the broadcast carried a dictionary")
        } finally allocator.close() // fails on a leak
      }
    }

  /** The broadcast value Comet made for a query's build side, and its chunks' bytes. */
  private def cometValue(): CometBroadcastValue =
    withConf("spark.sql.adaptive.enabled" -> "false") {
      val frame = spark.sql(query("INNER"))
      frame.collect()
      val exchange = frame.queryExecution.executedPlan.collectFirst {
        case e: QuiverCometBroadcastExchangeExec => e
      }
      exchange.get.executeBroadcast[CometBroadcastValue]().value
    }

  private def bytesOf(chunks: ChunkedByteBuffer): Array[Byte] = chunks.toArray

  private def readRows(value: CometBroadcastValue): Long = {
    val broadcast = spark.sparkContext.broadcast(value)
    try
      new QuiverCometBatchRDD(spark.sparkContext, 2, broadcast, true)
        .map(_.numRows().toLong)
        .reduce(_ + _)
    finally broadcast.destroy()
  }

  private def valueOf(streams: Seq[Array[Byte]]): CometBroadcastValue =
    new CometBroadcastValue(streams.map(b => new ChunkedByteBuffer(ByteBuffer.wrap(b))).toArray)

  private def flipped(bytes: Array[Byte], at: Int): Array[Byte] = {
    val copy = bytes.clone()
    copy(at) = (copy(at) ^ 0x5a).toByte
    copy
  }

  test(
    "a damaged Comet broadcast fails with Quiver's error naming it, and the cache stays usable"
  ) {
    val good = cometValue().chunks.toSeq.map(bytesOf)
    val expectedRows = 2L * 500
    assert(readRows(valueOf(good)) == expectedRows)
    val damages = Seq(
      "truncated" -> good.head.take(good.head.length / 2),
      "flipped" -> flipped(good.head, good.head.length / 3)
    )
    for ((damage, bytes) <- damages) {
      val error = intercept[SparkException](readRows(valueOf(bytes +: good.tail)))
      val message = Iterator
        .iterate[Throwable](error)(_.getCause)
        .takeWhile(_ != null)
        .map(_.getMessage)
        .mkString(" / ")
      assert(message.contains("broadcast"), s"$damage: $message")
      assert(message.matches("(?s).*offset \\d+.*"), s"$damage: $message")
      assert(QuiverCometBatchRDD.LendingAllocator.getAllocatedMemory == 0, damage)
    }
    assert(readRows(valueOf(good)) == expectedRows)
  }
}
