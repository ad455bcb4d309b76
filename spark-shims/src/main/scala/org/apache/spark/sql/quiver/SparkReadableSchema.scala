package org.apache.spark.sql.quiver

import dev.quiver.ipc.IpcFormatException
import org.apache.arrow.vector.types.pojo.{Field, FieldType, Schema}
import org.apache.spark.sql.quiver.vectors.{ValidatedColumns, ViewTypes}

/**
 * Refuses, naming the column, a decoded stream whose schema has an Arrow type Spark cannot read:
 * unions and run-end encoding, which no Spark type maps to; and the view types where Quiver's own
 * columns do not read the column they are in. Spark's `ArrowColumnVector` reads no view type (on
 * any Spark line up to 4.2); Quiver's columns read them as strings, binaries and arrays, but only
 * in a column all of whose types they read (a view inside a struct that also has, say, a
 * `LargeUtf8` would be left to `ArrowColumnVector`). Quiver decodes all of them for engines that
 * read its Arrow vectors. Checked before Spark reads any row of the stream, so that the task fails
 * with Quiver's error, not Spark's `MatchError` or `UnsupportedOperationException` somewhere in
 * the plan. By type id name: Arrow 11 and 12 have neither run-end encoding nor views.
 */
private[quiver] object SparkReadableSchema {

  private val noSparkType = "which no Spark type maps to"

  /** @param source what the stream is, for the error ("broadcast 7, stream 0") */
  def check(schema: Schema, source: String): Unit = {
    val fields = schema.getFields
    var i = 0
    while (i < fields.size()) {
      val field = fields.get(i)
      // A dictionary-encoded column is read as its values.
      val viewsReadable = ValidatedColumns.reads(withoutDictionary(field))
      check(field, field.getName, source, viewsReadable, field.getName)
      i += 1
    }
  }

  private def withoutDictionary(field: Field): Field =
    if (field.getDictionary == null) field
    else
      new Field(
        field.getName,
        new FieldType(field.isNullable, field.getType, null, field.getMetadata),
        field.getChildren
      )

  private def check(
      field: Field,
      path: String,
      source: String,
      viewsReadable: Boolean,
      column: String
  ): Unit = {
    val typeName = field.getType.getTypeID.name
    if (typeName == "Union" || typeName == "RunEndEncoded") {
      refuse(source, path, field, noSparkType)
    }
    if (ViewTypes.isView(field.getType) && !viewsReadable) {
      refuse(
        source,
        path,
        field,
        "which Spark's ArrowColumnVector does not read, and Quiver's columns read views only in " +
          s"a column all of whose types they read, which $column is not"
      )
    }
    val children = field.getChildren
    var i = 0
    while (i < children.size()) {
      val child = children.get(i)
      check(child, s"$path.${child.getName}", source, viewsReadable, column)
      i += 1
    }
  }

  private def refuse(source: String, path: String, field: Field, why: String): Nothing =
    throw new IpcFormatException(
      s"$source: column $path has type ${field.getType}, $why; Quiver decodes it for engines " +
        "that read its Arrow vectors, not into Spark batches (docs/reliability.md)"
    )
}
