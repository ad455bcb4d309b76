package org.apache.spark.sql.quiver.shuffle

import java.nio.charset.StandardCharsets

import scala.collection.mutable

import dev.quiver.shuffle.BlockCodec
import dev.quiver.spark.ArrowBatches
import dev.quiver.spark.shuffle.{QuiverExchange, QuiverShuffle, ShufflePartitioning}
import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.quiver.SparkRows
import org.scalatest.funsuite.AnyFunSuite

/** The exchange through a real local Spark shuffle: what comes out, and where. */
class ShuffleExchangeSuite extends AnyFunSuite with ShuffleTestSupport {

  private def sc: SparkContext = spark.sparkContext

  /** The reduce partition of every row, by its unique `k`, as `repartition` puts it. */
  private def sparkPartitions(
      df: DataFrame,
      numPartitions: Int,
      keys: Seq[String]
  ): Map[Long, Int] =
    df.repartition(numPartitions, keys.map(col): _*)
      .select("k")
      .rdd
      .mapPartitionsWithIndex((partition, rows) => rows.map(_.getLong(0) -> partition))
      .collect()
      .toMap

  private def quiverPartitions(rowsByPartition: Map[Int, Seq[Row]]) =
    rowsByPartition.toSeq.flatMap { case (partition, rows) =>
      rows.map(_.getAs[Long]("k") -> partition)
    }.toMap

  private def codecsOfBlocks(exchange: QuiverExchange): Set[String] =
    exchange.rawBlocks.map(_.codec.codecName).distinct().collect().toSet

  for (codec <- Seq("lz4", "zstd", "snappy", "none"))
    test(s"$codec blocks: every type and null survives, in the partitions repartition(k) uses") {
      val df = allTypes()
      val exchange = this.exchange(df, ShufflePartitioning.hash(4, "k"), codec = codec)
      assert(exchange.blockCodec.codecName == codec)
      val byPartition = rowsByPartition(exchange)

      assert(
        SparkRows.sorted(byPartition.values.flatten.toSeq) == SparkRows.sorted(df.collect().toSeq)
      )
      assert(quiverPartitions(byPartition) == sparkPartitions(df, 4, Seq("k")))
      assert(codecsOfBlocks(exchange) == Set(codec))
    }

  test("hashing on several keys of every hashable type matches repartition") {
    val df = allTypes(rows = 1200)
    val keys = Seq("s", "dec", "bigdec", "d", "ts", "bin", "st", "arr", "f", "flag")
    val byPartition = rowsByPartition(exchange(df, ShufflePartitioning.Hash(keys, 5)))
    assert(quiverPartitions(byPartition) == sparkPartitions(df, 5, keys))
  }

  test("more partitions than the bypass threshold: Spark's serialized sort shuffle") {
    val df = allTypes(rows = 900).select("k", "s", "st", "m")
    val partitions = 211
    val byPartition = rowsByPartition(exchange(df, ShufflePartitioning.hash(partitions, "k")))
    assert(quiverPartitions(byPartition) == sparkPartitions(df, partitions, Seq("k")))
    assert(
      SparkRows.sorted(byPartition.values.flatten.toSeq) == SparkRows.sorted(df.collect().toSeq)
    )
  }

  test("round robin spreads every map task's rows evenly; single puts all in one partition") {
    val df = allTypes(rows = 1000, partitions = 2)
    val robin = rowsByPartition(exchange(df, ShufflePartitioning.RoundRobin(3), rowsPerBatch = 64))
    assert(SparkRows.sorted(robin.values.flatten.toSeq) == SparkRows.sorted(df.collect().toSeq))
    val sizes = robin.values.map(_.size)
    // Each of the two map tasks deals its rows in turn, so sizes differ by at most one per task.
    assert(sizes.max - sizes.min <= 2, s"partition sizes $sizes")

    val single = rowsByPartition(exchange(df, ShufflePartitioning.Single))
    assert(single.keySet == Set(0))
    assert(SparkRows.sorted(single(0)) == SparkRows.sorted(df.collect().toSeq))
  }

  test("zero-column batches keep their row counts") {
    val df = spark.range(0, 1234, 1, 2).select()
    val exchange = this.exchange(df, ShufflePartitioning.RoundRobin(3), rowsPerBatch = 100)
    assert(exchange.batches.map(_.numRows().toLong).reduce(_ + _) == 1234)
  }

  test("small batches are coalesced up to batchSize rows, never past it") {
    val df = allTypes(rows = 3000)
    val target = 700
    val coalescing = exchange(df, ShufflePartitioning.hash(2, "k"), batchSize = target)
    val schema = df.schema
    val batches = coalescing.batches
      .map(batch => (batch.numRows(), SparkRows.fromBatch(batch, schema)))
      .collect()
    val blocks = coalescing.metrics.blocksRead.value
    assert(batches.forall(_._1 <= target), s"batch sizes ${batches.map(_._1).toSeq}")
    assert(batches.length < blocks / 3, s"${batches.length} batches from $blocks blocks")
    assert(SparkRows.sorted(batches.toSeq.flatMap(_._2)) == SparkRows.sorted(df.collect().toSeq))

    val notCoalescing = exchange(df, ShufflePartitioning.hash(2, "k"), batchSize = 1)
    val sizes = notCoalescing.batches.map(_.numRows()).collect()
    assert(sizes.length.toLong == notCoalescing.metrics.blocksRead.value)
    assert(sizes.sum == 3000)
  }

  test("hash keys are checked on the driver") {
    val df = allTypes(rows = 10)
    def refusalToHash(key: String): String =
      intercept[IllegalArgumentException] {
        QuiverShuffle.exchange(
          ArrowBatches.of(df, 10),
          df.schema,
          ShufflePartitioning.hash(2, key)
        )
      }.getMessage
    assert(refusalToHash("nope").contains("'nope' is not a column"))
    assert(refusalToHash("m").contains("cannot hash"))
  }

  test("when Spark compresses shuffle output, Quiver's blocks are not compressed again") {
    assert(ShuffleSettings.blockCodecName("zstd", sparkCompressesShuffle = false) == "zstd")
    assert(ShuffleSettings.blockCodecName("zstd", sparkCompressesShuffle = true) == "none")
    assert(ShuffleSettings.sparkCompressesShuffle(sc.getConf), "the test session compresses")

    val df = allTypes(rows = 600)
    val exchange =
      QuiverShuffle.exchange(ArrowBatches.of(df, 100), df.schema, ShufflePartitioning.Single)
    assert(exchange.blockCodec == BlockCodec.NONE)
    assert(codecsOfBlocks(exchange) == Set("none"))
    val files = ShuffleFiles.of(exchange.dependency.shuffleId)
    assert(files.nonEmpty)
    if (sc.getConf.get("spark.io.compression.codec", "lz4") == "lz4") {
      // Spark's lz4 codec writes LZ4Block frames: the blocks went through it, once.
      files.foreach { f =>
        assert(new String(f.head(8), StandardCharsets.US_ASCII) == "LZ4Block")
      }
    }
  }

  test("metrics: Quiver's blocks, bytes, time and rows; Spark's records read count rows") {
    val df = allTypes(rows = 2000)
    val exchange = this.exchange(df, ShufflePartitioning.hash(4, "k"), batchSize = 300)
    val recordsRead = new RecordsRead
    sc.addSparkListener(recordsRead)
    try {
      val rows = exchange.batches.map(_.numRows().toLong).reduce(_ + _)
      sc.listenerBus.waitUntilEmpty()
      val m = exchange.metrics
      assert(rows == 2000)
      assert(m.rowsRead.value == 2000)
      assert(m.blocksRead.value >= 3 * 4, "at least a block per map task per partition")
      assert(m.blockBytesRead.value > 2000)
      assert(m.readTime.value > 0)
      assert(m.batchesOut.value < m.blocksRead.value)
      assert(recordsRead.total == 2000)

      val raw = exchange.rawBlocks.map(_.body.remaining().toLong).collect()
      sc.listenerBus.waitUntilEmpty()
      assert(m.blocksRead.value == 2 * raw.length)
      assert(recordsRead.total == 2000 + raw.length, "the raw path counts blocks as records")
    } finally sc.removeSparkListener(recordsRead)
  }
}

/** Spark's shuffle records-read metric, summed over the result tasks that end while listening. */
private class RecordsRead extends SparkListener {

  private val perTask = mutable.ArrayBuffer[Long]()

  override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
    if (end.taskMetrics != null && end.taskType == "ResultTask") synchronized {
      perTask += end.taskMetrics.shuffleReadMetrics.recordsRead
    }

  def total: Long = synchronized(perTask.sum)
}
