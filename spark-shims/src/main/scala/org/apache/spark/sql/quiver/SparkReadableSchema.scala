package org.apache.spark.sql.quiver

import dev.quiver.ipc.IpcFormatException
import org.apache.arrow.vector.dictionary.DictionaryProvider
import org.apache.arrow.vector.types.pojo.{Field, Schema}
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

  /**
   * Checks the columns of a stream as Spark will read them: a dictionary-encoded column as its
   * dictionary's values, found in `dictionaries`.
   *
   * @param source what the stream is, for the error ("broadcast stream 0")
   */
  def check(schema: Schema, dictionaries: DictionaryProvider, source: String): Unit = {
    val fields = schema.getFields
    var i = 0
    while (i < fields.size()) {
      val field = fields.get(i)
      val encoding = field.getDictionary
      val dictionary = if (encoding == null) null else dictionaries.lookup(encoding.getId)
      checkColumn(
        if (dictionary == null) field else dictionary.getVector.getField,
        field.getName,
        source
      )
      i += 1
    }
  }

  /** Checks `column`, read by Spark as column `name` (a dictionary's values already decoded). */
  def checkColumn(column: Field, name: String, source: String): Unit =
    check(column, name, source, column, name)

  private def check(
      field: Field,
      path: String,
      source: String,
      column: Field,
      name: String
  ): Unit = {
    val typeName = field.getType.getTypeID.name
    if (typeName == "Union" || typeName == "RunEndEncoded") {
      refuse(source, path, field, noSparkType)
    }
    if (ViewTypes.isView(field.getType) && !ValidatedColumns.reads(column)) {
      refuse(
        source,
        path,
        field,
        "which Spark's ArrowColumnVector does not read; Quiver's columns read views only in a " +
          s"column all of whose types they read, and ${whyNotRead(column, name)}"
      )
    }
    val children = field.getChildren
    var i = 0
    while (i < children.size()) {
      val child = children.get(i)
      check(child, s"$path.${child.getName}", source, column, name)
      i += 1
    }
  }

  /** Why Quiver's columns do not read `column`: the first field in it they do not read. */
  private def whyNotRead(column: Field, name: String): String =
    if (!ValidatedColumns.nativeLittleEndian) "they read none on a big-endian JVM"
    else {
      var field = column
      var path = name
      var deeper = true
      while (deeper) {
        val children = field.getChildren
        var unread = -1
        var i = 0
        while (unread < 0 && i < children.size()) {
          if (!ValidatedColumns.reads(children.get(i))) unread = i
          i += 1
        }
        if (unread < 0) deeper = false
        else {
          field = children.get(unread)
          path = s"$path.${field.getName}"
        }
      }
      val encoded = if (field.getDictionary != null) ", dictionary-encoded" else ""
      s"they do not read $path (${field.getType}$encoded)"
    }

  private def refuse(source: String, path: String, field: Field, why: String): Nothing =
    throw new IpcFormatException(
      s"$source: column $path has type ${field.getType}, $why; Quiver decodes it for engines " +
        "that read its Arrow vectors, not into Spark batches (docs/reliability.md)"
    )
}
