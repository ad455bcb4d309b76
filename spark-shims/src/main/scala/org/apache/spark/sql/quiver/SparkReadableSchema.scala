package org.apache.spark.sql.quiver

import dev.quiver.ipc.IpcFormatException
import org.apache.arrow.vector.types.pojo.{Field, Schema}

/**
 * Refuses, naming the column, a decoded stream whose schema has an Arrow type no Spark type maps
 * to: unions and run-end encoding, which Quiver decodes for engines that read Arrow but which
 * neither Spark's `ArrowColumnVector` nor Quiver's columns read. Checked before Spark reads any row
 * of the stream, so that the task fails with Quiver's error, not Spark's `MatchError` or
 * `UnsupportedOperationException` somewhere in the plan. By type id name: Arrow 11 and 12 have no
 * run-end encoding.
 */
private[quiver] object SparkReadableSchema {

  private val withoutSparkType = Set("Union", "RunEndEncoded")

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
    if (withoutSparkType.contains(field.getType.getTypeID.name)) {
      throw new IpcFormatException(
        s"$source: column $path has type ${field.getType}, which no Spark type maps to; Quiver " +
          "decodes it for engines that read its Arrow vectors, not into Spark batches " +
          "(docs/reliability.md)"
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
