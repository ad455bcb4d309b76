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
    val read = new Array[ValueVector](root.getFieldVectors.size())
    var i = 0
    while (i < read.length) {
      val vector = root.getVector(i)
      read(i) = column(vector)
      // The schema's field where Spark reads the vector itself: a union vector's own field makes
      // up type ids of its own.
      val field = if (read(i) eq vector) root.getSchema.getFields.get(i) else read(i).getField
      SparkReadableSchema.checkColumn(field, vector.getName, "a decoded batch")
      i += 1
    }
    val columns = read.map(sparkColumn)
    new ColumnarBatch(columns, root.getRowCount)
  }

  /** Spark's `ArrowColumnVector` over `vector`, or Quiver's column where it has a view type. */
  private def sparkColumn(vector: ValueVector): ColumnVector = vector match {
    case withView: FieldVector if ViewTypes.hasView(withView.getField) =>
      ValidatedColumns.of(withView)
    case _ => new ArrowColumnVector(vector)
  }
}
