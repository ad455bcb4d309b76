package org.apache.spark.sql.quiver.join

import java.nio.charset.StandardCharsets
import java.util.Arrays

import dev.quiver.ipc.ArrowIpc
import org.apache.spark.sql.quiver.QuiverRuntime
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{
  BigIntVector,
  FieldVector,
  IntVector,
  VarCharVector,
  VectorSchemaRoot
}
import org.apache.arrow.vector.dictionary.{Dictionary, DictionaryProvider}
import org.apache.arrow.vector.types.pojo.{ArrowType, DictionaryEncoding, Field, FieldType}
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.quiver.SparkCodec
import org.apache.spark.sql.types.StructType

/**
 * A build side as an engine might broadcast it: two compressed Arrow IPC streams whose `color`
 * column is dictionary-encoded, each stream against a dictionary of its own (so the two cannot be
 * merged). Rows: `k = id % 150`, `color` red, green or blue by `id % 3`, null when `id % 4 = 3`.
 */
object DictionaryStreams {

  val rows: Long = 300L

  private val colors = Seq("red", "green", "blue")

  /** The same rows as Spark computes them. */
  def asDataFrame(spark: SparkSession): DataFrame =
    spark
      .range(0, rows, 1, 2)
      .selectExpr(
        "id % 150 AS k",
        "CASE WHEN id % 4 = 3 THEN NULL ELSE " +
          "element_at(array('red', 'green', 'blue'), CAST(id % 3 AS INT) + 1) END AS color"
      )

  def schema(spark: SparkSession): StructType = asDataFrame(spark).schema

  /** The two streams, compressed with Spark's configured codec. */
  def encode(spark: SparkSession): Seq[Array[Byte]] = {
    val codec = SparkCodec(spark.sparkContext.getConf)
    val allocator =
      QuiverRuntime.allocator.newChildAllocator("test-dictionary-streams", 0, Long.MaxValue)
    try
      // The second stream's dictionary orders the colors differently, so its indices differ.
      Seq(
        encodeStream(0L until rows / 2, colors, allocator, ArrowIpc.encode(_, _, codec)),
        encodeStream(rows / 2 until rows, colors.reverse, allocator, ArrowIpc.encode(_, _, codec))
      )
    finally allocator.close()
  }

  private def encodeStream(
      ids: Seq[Long],
      dictionaryOrder: Seq[String],
      allocator: BufferAllocator,
      write: (VectorSchemaRoot, DictionaryProvider) => Array[Byte]
  ): Array[Byte] = {
    val encoding = new DictionaryEncoding(1L, false, new ArrowType.Int(32, true))
    val dictionaryValues = new VarCharVector("color", allocator)
    val keys = new BigIntVector("k", allocator)
    val indices = new IntVector(
      new Field("color", new FieldType(true, new ArrowType.Int(32, true), encoding), null),
      allocator
    )
    try {
      dictionaryOrder.zipWithIndex.foreach { case (color, i) =>
        dictionaryValues.setSafe(i, color.getBytes(StandardCharsets.UTF_8))
      }
      dictionaryValues.setValueCount(dictionaryOrder.size)
      ids.zipWithIndex.foreach { case (id, row) =>
        keys.setSafe(row, id % 150)
        if (id % 4 == 3) indices.setNull(row)
        else indices.setSafe(row, dictionaryOrder.indexOf(colors((id % 3).toInt)))
      }
      keys.setValueCount(ids.size)
      indices.setValueCount(ids.size)
      val root = new VectorSchemaRoot(
        Arrays.asList(keys.getField, indices.getField),
        Arrays.asList[FieldVector](keys, indices),
        ids.size
      )
      write(
        root,
        new DictionaryProvider.MapDictionaryProvider(new Dictionary(dictionaryValues, encoding))
      )
    } finally {
      keys.close()
      indices.close()
      dictionaryValues.close()
    }
  }
}
