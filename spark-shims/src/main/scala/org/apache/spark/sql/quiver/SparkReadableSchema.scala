package org.apache.spark.sql.quiver

import dev.quiver.ipc.IpcFormatException
import org.apache.arrow.vector.types.pojo.{Field, Schema}

/**
 * Refuses, naming the column, a decoded stream whose schema has an Arrow type Spark cannot read:
 * unions and run-end encoding, which no Spark type maps to, and the view types, which Spark's
 * `ArrowColumnVector` does not read (on any Spark line up to 4.2) and Quiver's columns do not yet.
 * Quiver decodes all of them for engines that read its Arrow vectors. Checked before Spark reads
 * any row of the stream, so that the task fails with Quiver's error, not Spark's `MatchError` or
 * `UnsupportedOperationException` somewhere in the plan. By type id name: Arrow 11 and 12 have
 * neither run-end encoding nor views.
 */
private[quiver] object SparkReadableSchema {

  private val noSparkType = "which no Spark type maps to"
  private val notReadBySpark = "which Spark's ArrowColumnVector does not read"

  /** Arrow type id to why Spark cannot read it. */
  private val unreadable = Map(
    "Union" -> noSparkType,
    "RunEndEncoded" -> noSparkType,
    "Utf8View" -> notReadBySpark,
    "BinaryView" -> notReadBySpark,
    "ListView" -> notReadBySpark,
    "LargeListView" -> notReadBySpark
  )

  /** @param source what the stream is, for the error ("broadcast 7, stream 0") */
  def check(schema: Schema, source: String): Unit = {
    val fields = schema.getFields
    var i = 0
    while (i < fields.size()) {
      check(fields.get(i), fields.get(i).getName, source)
      i += 1
    }
  }

  private def check(field: Field, path: String, source: String): Unit = {
    unreadable.get(field.getType.getTypeID.name).foreach { why =>
      throw new IpcFormatException(
        s"$source: column $path has type ${field.getType}, $why; Quiver decodes it for engines " +
          "that read its Arrow vectors, not into Spark batches (docs/reliability.md)"
      )
    }
    val children = field.getChildren
    var i = 0
    while (i < children.size()) {
      check(children.get(i), s"$path.${children.get(i).getName}", source)
      i += 1
    }
  }
}
