package org.apache.spark.sql.quiver

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD}
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/** The broadcast read path on a real local SparkSession: eight consumer tasks at once. */
class BroadcastReadSuite extends AnyFunSuite with QuiverSparkSession with BeforeAndAfterEach {

  private val consumers = 8

  private def buildSide: DataFrame =
    spark
      .range(0, 3000, 1, 3)
      .selectExpr(
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
    val expected = SparkRows.sorted(df.collect().toSeq)
    val counters = QuiverRuntime.broadcastCache.counters()
    val decodesBefore = counters.decodes()
    val sharedBefore = counters.sharedReads()

    val perTask = readAllTogether(broadcast.rdd(consumers), broadcast)

    assert(perTask.size == consumers)
    perTask.foreach(rows => assert(SparkRows.sorted(rows) == expected))
    assert(counters.decodes() - decodesBefore == 1)
    assert(counters.sharedReads() - sharedBefore == consumers - 1)
    assertCacheEmpty()
    broadcast.value.destroy()
  }

  test("with the setting off every consumer decodes for itself and gets the same rows") {
    val df = buildSide
    spark.conf.set(QuiverConf.ShareDecodedBroadcasts.key, "false")
    val broadcast = ArrowBroadcast.of(df)
    val expected = SparkRows.sorted(df.collect().toSeq)
    val counters = QuiverRuntime.broadcastCache.counters()
    val privateBefore = counters.privateDecodes()
    val decodesBefore = counters.decodes()

    val perTask = readAllTogether(broadcast.rdd(consumers), broadcast)

    perTask.foreach(rows => assert(SparkRows.sorted(rows) == expected))
    assert(counters.privateDecodes() - privateBefore == consumers)
    assert(counters.decodes() == decodesBefore)
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

object BroadcastProbe {
  @volatile var arrived = new CountDownLatch(0)
  val codecs = new ConcurrentLinkedQueue[AnyRef]()
}
