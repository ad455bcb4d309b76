package org.apache.spark.sql.quiver

import org.apache.arrow.vector.{FieldVector, ValueVector, VectorSchemaRoot}
import org.apache.spark.sql.quiver.vectors.{ValidatedColumns, ViewTypes}
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}

/** Arrow batches as Spark reads them: the broadcast and shuffle read paths share this. */
private[quiver] object SparkBatches {

  /**
   * A `ColumnarBatch` over `root`'s vectors, not a copy: valid while `root` is, and closing it
   * would close them (leave that to whoever owns `root`).
   *
   * @param column the vector Spark reads for each of `root`'s (e.g. a dictionary-encoded one
   *   decoded); by default the vector itself
   */
  def toColumnarBatch(
      root: VectorSchemaRoot,
      column: FieldVector => ValueVector = vector => vector
  ): ColumnarBatch = {
    SparkReadableSchema.check(root.getSchema, "a decoded batch")
    val columns = new Array[ColumnVector](root.getFieldVectors.size())
    var i = 0
    while (i < columns.length) {
      columns(i) = sparkColumn(column(root.getVector(i)))
      i += 1
    }
    new ColumnarBatch(columns, root.getRowCount)
  }

  /** Spark's `ArrowColumnVector` over `vector`, or Quiver's column where it has a view type. */
  private def sparkColumn(vector: ValueVector): ColumnVector = vector match {
    case withView: FieldVector if ViewTypes.hasView(withView.getField) =>
      ValidatedColumns.of(withView)
    case _ => new ArrowColumnVector(vector)
  }
}
