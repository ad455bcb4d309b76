package org.apache.spark.sql.quiver

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/** Rows in a form that compares by value, whatever produced them. */
object SparkRows {

  /** A batch's rows as external rows, copied out of the batch's (reused) vectors. */
  def fromBatch(batch: ColumnarBatch, schema: StructType): Seq[Row] = {
    val toScala = CatalystTypeConverters.createToScalaConverter(schema)
    val rows = Seq.newBuilder[Row]
    val it = batch.rowIterator()
    // Converted straight from the batch: ColumnarBatchRow.copy() fails on arrays holding nulls.
    while (it.hasNext) rows += toScala(it.next()).asInstanceOf[Row]
    rows.result()
  }

  /** Values that compare by content: byte arrays, nested rows, sequences and maps included. */
  def normalize(value: Any): Any = value match {
    case bytes: Array[Byte] => bytes.toSeq
    case row: Row => row.toSeq.map(normalize)
    case map: scala.collection.Map[_, _] =>
      map.map { case (k, v) => normalize(k) -> normalize(v) }.toMap
    case seq: scala.collection.Seq[_] => seq.map(normalize).toSeq
    case other => other
  }

  /** The rows as a sorted multiset, for order-insensitive comparison. */
  def sorted(rows: Seq[Row]): Seq[Any] = rows.map(normalize).sortBy(_.toString)
}
