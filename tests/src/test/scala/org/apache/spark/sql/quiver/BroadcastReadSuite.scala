package org.apache.spark.sql.quiver

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD, BroadcastReadMetrics}
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.util.LongAccumulator
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/** The broadcast read path on a real local SparkSession: eight consumer tasks at once. */
class BroadcastReadSuite extends AnyFunSuite with QuiverSparkSession with BeforeAndAfterEach {

  private val consumers = 8

  private def buildSide: DataFrame =
    threePartitionsOf(
      "id AS k",
      "CASE WHEN id % 5 = 0 THEN NULL ELSE concat('s-', id) END AS s",
      "named_struct('x', CAST(id AS INT), 'y', CASE WHEN id % 3 = 0 THEN NULL ELSE " +
        "CAST(id AS STRING) END) AS st",
      "CASE WHEN id % 7 = 0 THEN NULL ELSE array(id, id + 1, NULL) END AS arr",
      "map(concat('k', id % 4), id) AS m",
      "CAST(id / 3 AS DECIMAL(12, 2)) AS dec",
      "date_add(DATE'2020-01-01', CAST(id AS INT)) AS d",
      "timestamp_seconds(id * 1000) AS ts",
      "CAST(concat('b', id) AS BINARY) AS bin"
    )

  override def afterEach(): Unit = {
    spark.conf.unset(QuiverConf.ShareDecodedBroadcasts.key)
    super.afterEach()
  }

  /**
   * Runs one task per partition of `rdd`; every task reads the whole broadcast, then waits until
   * all have read it, so that all hold it at the same time. Returns each task's rows.
   */
  private def readAllTogether(rdd: ArrowBroadcastRDD, broadcast: ArrowBroadcast): Seq[Seq[Row]] = {
    BroadcastProbe.arrived = new CountDownLatch(rdd.getNumPartitions)
    val schema = broadcast.schema
    rdd
      .mapPartitions { batches =>
        val rows = batches.flatMap(batch => SparkRows.fromBatch(batch, schema)).toVector
        BroadcastProbe.arrived.countDown()
        BroadcastProbe.arrived.await(60, TimeUnit.SECONDS)
        Iterator(rows)
      }
      .collect()
      .toSeq
  }

  /**
   * Runs `rdd` as [[readAllTogether]] does, and returns each task's read figures, as Spark's
   * listeners got them, and the rows.
   */
  private def readWithFigures(
      rdd: ArrowBroadcastRDD,
      broadcast: ArrowBroadcast
  ): (Seq[Seq[Row]], Seq[ReadFigures]) = {
    val (rows, tasks) =
      TaskAccumulables.during(spark.sparkContext, rdd.readMetrics.all.map(_.id)) {
        readAllTogether(rdd, broadcast)
      }
    (rows, tasks.perTask.map(ReadFigures.of(rdd.readMetrics, _)))
  }

  /**
   * Reads `broadcast`, made of `df`, with every consumer at once, as [[readWithFigures]] does: each
   * task must get the rows Spark collects of `df`. Returns the RDD and each task's read figures.
   */
  private def readAsSpark(
      df: DataFrame,
      broadcast: ArrowBroadcast
  ): (ArrowBroadcastRDD, Seq[ReadFigures]) = {
    val expected = SparkRows.sorted(df.collect().toSeq)
    val rdd = broadcast.rdd(consumers)
    val (perTask, figures) = readWithFigures(rdd, broadcast)
    assert(perTask.size == consumers)
    perTask.foreach(rows => assert(SparkRows.sorted(rows) == expected))
    (rdd, figures)
  }

  /** Every task read once, and the driver's totals are the sums of the tasks' figures. */
  private def assertTotals(rdd: ArrowBroadcastRDD, tasks: Seq[ReadFigures]): Unit = {
    assert(tasks.size == rdd.getNumPartitions)
    tasks.foreach(t => assert(t.reads == 1, s"a task's open counted $t"))
    val m = rdd.readMetrics
    assert(m.decodeTime.value == tasks.map(_.decodeNanos).sum)
    assert(m.waitTime.value == tasks.map(_.waitNanos).sum)
    assert(m.decoded.value == tasks.map(_.decoded).sum)
    assert(m.decodedPrivately.value == tasks.map(_.decodedPrivately).sum)
    assert(m.shared.value == tasks.map(_.shared).sum)
    assert(m.retained.value == tasks.map(_.retained).sum)
  }

  private def assertCacheEmpty(): Unit = {
    val snapshot = QuiverRuntime.broadcastCache.snapshot()
    assert(snapshot.isEmpty, s"cache still holds $snapshot")
    assert(QuiverRuntime.allocator.getAllocatedMemory == 0)
  }

  test("eight overlapping consumers decode once and each get Spark's rows") {
    val df = buildSide
    val broadcast = ArrowBroadcast.of(df)
    assert(broadcast.rows == 3000)
    assert(broadcast.coalesced, "three source partitions should have been coalesced")
    val counters = QuiverRuntime.broadcastCache.counters()
    val decodesBefore = counters.decodes()
    val sharedBefore = counters.sharedReads()

    val (rdd, figures) = readAsSpark(df, broadcast)

    assert(counters.decodes() - decodesBefore == 1)
    assert(counters.sharedReads() - sharedBefore == consumers - 1)
    // Per task: one decoded, with a decode time; the others read its decode, with none.
    assertTotals(rdd, figures)
    val (decoding, sharing) = figures.partition(_.decoded == 1)
    assert(decoding.size == 1, figures)
    assert(decoding.head.decodeNanos > 0)
    assert(sharing.forall(t => t.shared == 1 && t.decodeNanos == 0), figures)
    assert(rdd.readMetrics.decoded.value == counters.decodes() - decodesBefore)
    assert(rdd.readMetrics.shared.value == counters.sharedReads() - sharedBefore)
    assertCacheEmpty()
    broadcast.value.destroy()
  }

  test("with the setting off every consumer decodes for itself and gets the same rows") {
    val df = buildSide
    spark.conf.set(QuiverConf.ShareDecodedBroadcasts.key, "false")
    val broadcast = ArrowBroadcast.of(df)
    val counters = QuiverRuntime.broadcastCache.counters()
    val privateBefore = counters.privateDecodes()
    val decodesBefore = counters.decodes()

    val (rdd, figures) = readAsSpark(df, broadcast)

    assert(counters.privateDecodes() - privateBefore == consumers)
    assert(counters.decodes() == decodesBefore)
    assertTotals(rdd, figures)
    figures.foreach { t =>
      assert(t.decodedPrivately == 1 && t.decodeNanos > 0 && t.waitNanos == 0, figures)
    }
    assertCacheEmpty()
    broadcast.value.destroy()
  }

  test("an empty build side broadcasts no stream and reads as no batch") {
    val broadcast = ArrowBroadcast.of(buildSide.where("k < 0"))
    assert(broadcast.rows == 0)
    assert(broadcast.value.value.isEmpty)
    val batches = broadcast.rdd(2).map(_.numRows()).collect()
    assert(batches.isEmpty)
    assertCacheEmpty()
    broadcast.value.destroy()
  }

  test("every task reads broadcasts through the executor's one codec") {
    val broadcast = ArrowBroadcast.of(buildSide)
    val value = broadcast.value
    BroadcastProbe.codecs.clear()
    val rows = spark.sparkContext
      .parallelize(0 until consumers, consumers)
      .mapPartitions { _ =>
        val context = TaskContext.get()
        BroadcastProbe.codecs.add(ColumnarBatches.sourceOf(value).codec())
        Iterator(ColumnarBatches.read(value, context, shareDecoded = false).map(_.numRows()).sum)
      }
      .collect()

    assert(rows.toSeq == Seq.fill(consumers)(3000))
    val seen = BroadcastProbe.codecs.toArray.toSeq
    assert(seen.size == consumers)
    // Local mode: the tasks run in the driver's SparkEnv.
    val codec = QuiverRuntime.broadcastCodec
    seen.foreach(c => assert(c eq codec, s"a task read through its own codec $c"))
    assertCacheEmpty()
    value.destroy()
  }

  test("a zero-column build side keeps its row count") {
    val broadcast = ArrowBroadcast.of(spark.range(0, 1234, 1, 2).select())
    val counts = broadcast.rdd(2).map(_.numRows()).collect()
    assert(counts.toSeq == Seq(1234, 1234))
    assertCacheEmpty()
    broadcast.value.destroy()
  }
}

/** One task's figures of [[BroadcastReadMetrics]] (or of a plan node's read metrics). */
final case class ReadFigures(
    decodeNanos: Long,
    waitNanos: Long,
    decoded: Long,
    decodedPrivately: Long,
    shared: Long,
    retained: Long
) {
  def reads: Long = decoded + decodedPrivately + shared + retained
}

object ReadFigures {

  /** The figures of `metrics` in one task's updates, by accumulator id. */
  def of(metrics: BroadcastReadMetrics, updates: Map[Long, Long]): ReadFigures = {
    def update(a: LongAccumulator): Long = updates.getOrElse(a.id, 0L)
    ReadFigures(
      update(metrics.decodeTime),
      update(metrics.waitTime),
      update(metrics.decoded),
      update(metrics.decodedPrivately),
      update(metrics.shared),
      update(metrics.retained)
    )
  }
}

object BroadcastProbe {
  @volatile var arrived = new CountDownLatch(0)
  val codecs = new ConcurrentLinkedQueue[AnyRef]()
}
