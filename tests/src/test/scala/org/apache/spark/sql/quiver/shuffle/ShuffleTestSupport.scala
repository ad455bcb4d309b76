package org.apache.spark.sql.quiver.shuffle

import java.nio.{ByteBuffer, ByteOrder}

import dev.quiver.shuffle.ShuffleBlockFormat
import org.apache.spark.sql.quiver.QuiverRuntime
import dev.quiver.spark.ArrowBatches
import dev.quiver.spark.shuffle.{QuiverExchange, ShufflePartitioning}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.quiver.{QuiverSparkSession, SparkRows}
import org.scalatest.{Assertions, BeforeAndAfterEach, Suite}

/** What the shuffle suites share: test data, exchanges with explicit settings, the leak check. */
trait ShuffleTestSupport extends QuiverSparkSession with BeforeAndAfterEach with Assertions {
  self: Suite =>

  /** Every Spark type the exchange carries, with nulls in every column; `k` is unique. */
  protected def allTypes(rows: Int = 1500, partitions: Int = 3): DataFrame =
    ShuffleTestSupport.allTypes(spark, rows, partitions)

  /** An exchange with these settings, whatever the session's (and Spark's compression) say. */
  protected def exchange(
      df: DataFrame,
      partitioning: ShufflePartitioning,
      codec: String = "none",
      batchSize: Int = 8192,
      rowsPerBatch: Int = 200
  ): ShuffleExchange =
    new ShuffleExchange(
      ArrowBatches.of(df, rowsPerBatch),
      df.schema,
      partitioning,
      settings(codec, batchSize)
    )

  /** The settings [[exchange]] builds an exchange with. */
  protected def settings(codec: String = "none", batchSize: Int = 8192): ShuffleSettings =
    ShuffleSettings(codec, 3, batchSize, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH)

  /** Every row the exchange's decoding path gives, by reduce partition. */
  protected def rowsByPartition(exchange: QuiverExchange): Map[Int, Seq[Row]] = {
    val schema = exchange.schema
    exchange.batches
      .mapPartitionsWithIndex { (partition, batches) =>
        batches.flatMap(batch => SparkRows.fromBatch(batch, schema).map(partition -> _))
      }
      .collect()
      .toSeq
      .groupBy(_._1)
      .map { case (partition, rows) => partition -> rows.map(_._2) }
  }

  /** A shuffle whose map outputs (two map tasks, one reduce partition) are on disk. */
  protected def writtenShuffle(): ShuffleExchange = {
    val df = allTypes(rows = 600, partitions = 2)
    val exchange = this.exchange(df, ShufflePartitioning.Single, rowsPerBatch = 100)
    spark.sparkContext.submitMapStage(exchange.dependency).get()
    exchange
  }

  /** Where each block of a stream of blocks starts. */
  protected def blockStarts(blocks: Array[Byte]): Seq[Int] = {
    val starts = Seq.newBuilder[Int]
    var at = 0
    while (at < blocks.length) {
      starts += at
      at += 8 + ByteBuffer.wrap(blocks, at, 8).order(ByteOrder.LITTLE_ENDIAN).getLong().toInt
    }
    starts.result()
  }

  protected def assertNothingLeaked(): Unit = {
    val held = QuiverRuntime.allocator.getAllocatedMemory
    assert(held == 0, s"Quiver's allocator still holds $held bytes")
  }

  override def afterEach(): Unit =
    try assertNothingLeaked()
    finally super.afterEach()
}

object ShuffleTestSupport {

  def allTypes(spark: SparkSession, rows: Int, partitions: Int): DataFrame =
    spark
      .range(0, rows.toLong, 1, partitions)
      .selectExpr(
        "id AS k",
        "CASE WHEN id % 15 = 0 THEN NULL ELSE CAST(id % 100 AS TINYINT) END AS tiny",
        "CASE WHEN id % 16 = 0 THEN NULL ELSE CAST(id % 30000 AS SMALLINT) END AS small",
        "CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id * 7 AS INT) END AS i",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE id * 1000003 END AS l",
        "CASE WHEN id % 18 = 0 THEN NULL ELSE CAST(id / 7 AS FLOAT) END AS f",
        "CASE WHEN id % 20 = 0 THEN NULL ELSE id / 7 END AS dbl",
        "CASE WHEN id % 14 = 0 THEN NULL ELSE id % 2 = 0 END AS flag",
        "CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(id / 3 AS DECIMAL(12, 2)) END AS dec",
        "CASE WHEN id % 8 = 0 THEN NULL ELSE CAST(id * 1000003 AS DECIMAL(30, 5)) END AS bigdec",
        "CASE WHEN id % 9 = 0 THEN NULL ELSE date_add(DATE'2020-01-01', CAST(id AS INT)) END AS d",
        "CASE WHEN id % 10 = 0 THEN NULL ELSE timestamp_seconds(id * 1000) END AS ts",
        "CASE WHEN id % 5 = 0 THEN NULL ELSE concat('s-', id % 97) END AS s",
        "CASE WHEN id % 12 = 0 THEN NULL ELSE CAST(concat('b', id) AS BINARY) END AS bin",
        "CASE WHEN id % 29 = 0 THEN NULL ELSE named_struct('x', CAST(id AS INT), 'y', " +
          "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS STRING) END, 'z', array(id, NULL)) " +
          "END AS st",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE array(id % 13, id + 1, NULL) END AS arr",
        "CASE WHEN id % 19 = 0 THEN NULL ELSE map(concat('k', id % 4), " +
          "CASE WHEN id % 2 = 0 THEN NULL ELSE id END) END AS m",
        "CASE WHEN id % 23 = 0 THEN NULL ELSE array(named_struct('a', id, 'b', " +
          "map('x', array(CAST(id AS STRING), NULL)))) END AS nested"
      )
}
