package org.apache.spark.sql.quiver.shuffle

import dev.quiver.spark.QuiverRuntime
import dev.quiver.spark.shuffle.{QuiverShuffle, ShufflePartitioning}
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.quiver.ArrowSchemas
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}

/** The example of docs/shuffle.md, kept here so that a test runs it. */
object ShuffleExample {

  /** Rows per reduce partition on the decoding path, and the raw blocks' (codec, body bytes). */
  def run(spark: SparkSession): (Array[Long], Array[(String, Int)]) = {
    // docs/shuffle.md: begin
    val df = spark.range(0, 100000, 1, 4).selectExpr("id % 1000 AS customer", "id * 3 AS amount")
    val schema = df.schema

    // Arrow-backed input: each partition's rows in batches of 4096, in one root reused per task.
    val batches = df.queryExecution.toRdd.mapPartitions { rows =>
      val allocator = QuiverRuntime.allocator.newChildAllocator("input", 0, Long.MaxValue)
      val root = VectorSchemaRoot.create(ArrowSchemas.toArrow(schema, "UTC"), allocator)
      TaskContext.get().addTaskCompletionListener[Unit] { _ =>
        root.close()
        allocator.close()
      }
      val writer = ArrowWriter.create(root)
      val columns: Array[ColumnVector] =
        Array.tabulate(schema.length)(i => new ArrowColumnVector(root.getVector(i)))
      new Iterator[ColumnarBatch] {
        override def hasNext: Boolean = rows.hasNext
        override def next(): ColumnarBatch = {
          writer.reset()
          var n = 0
          while (n < 4096 && rows.hasNext) {
            writer.write(rows.next())
            n += 1
          }
          writer.finish()
          new ColumnarBatch(columns, n)
        }
      }
    }

    val exchange = QuiverShuffle.exchange(batches, schema, ShufflePartitioning.hash(8, "customer"))

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
