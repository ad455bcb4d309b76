package dev.quiver.examples

import org.apache.spark.sql.SparkSession

/**
 * The example of docs/shuffle.md, kept here so that it compiles against Quiver's API alone and a
 * test runs it (DocExamplesSuite checks the region is the guide's code block).
 */
object ShuffleExample {

  /** Rows per reduce partition on the decoding path, and the raw blocks' (codec, body bytes). */
  def run(spark: SparkSession): (Array[Long], Array[(String, Int)]) = {
    // docs/shuffle.md: begin
    import dev.quiver.spark.ArrowBatches
    import dev.quiver.spark.shuffle.{QuiverShuffle, ShufflePartitioning}

    val df = spark.range(0, 100000, 1, 4).selectExpr("id % 1000 AS customer", "id * 3 AS amount")

    // Arrow-backed input: each partition's rows in batches of 4096, written by Spark's ArrowWriter.
    val batches = ArrowBatches.of(df, 4096)

    val exchange =
      QuiverShuffle.exchange(batches, df.schema, ShufflePartitioning.hash(8, "customer"))

    // JVM consumers: decoded batches, each row in the partition df.repartition(8, $"customer")
    // puts it in.
    val rowsPerPartition = exchange.batches
      .mapPartitions(batches => Iterator(batches.map(_.numRows().toLong).sum))
      .collect()

    // Native consumers: each block's compressed body, in a direct buffer reused block to block.
    val blocks = exchange.rawBlocks.map(b => (b.codec.codecName, b.body.remaining())).collect()
    // docs/shuffle.md: end
    (rowsPerPartition, blocks)
  }
}
