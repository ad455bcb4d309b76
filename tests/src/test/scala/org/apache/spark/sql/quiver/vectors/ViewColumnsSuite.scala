package org.apache.spark.sql.quiver.vectors

import java.nio.charset.StandardCharsets.UTF_8

import dev.quiver.ipc.{ArrowIpc, IpcFormatException}
import dev.quiver.testing.EncodedColumns
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{FieldVector, IntVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.{StructVector, UnionVector}
import org.apache.arrow.vector.dictionary.{Dictionary, DictionaryProvider}
import org.apache.arrow.vector.holders.NullableIntHolder
import org.apache.arrow.vector.types.pojo.{ArrowType, DictionaryEncoding, Field, FieldType, Schema}
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.quiver.{QuiverSparkSession, SparkBatches, SparkCodec}
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.sql.quiver.ArrowAllocators.withAllocator
import org.scalatest.funsuite.AnyFunSuite

/**
 * Arrow's view types read as Spark values by Quiver's columns, on the Arrow lines that have them
 * (Spark 4.x's; skipped on 3.x, where their schemas do not parse): `Utf8View` as strings,
 * `BinaryView` as binaries, `ListView` and `LargeListView` as arrays, equal to what Arrow Java's
 * own vectors hold, through a broadcast's decode and on the shuffle's batches, and through Spark's
 * own row projection. A view inside a column Quiver's columns do not read is refused by name.
 */
class ViewColumnsSuite extends AnyFunSuite with QuiverSparkSession {

  import ViewColumnsSuite.sparkRows

  private def assumeViews(): Unit =
    assume(EncodedColumns.viewTypesKnown(), "this Arrow Java has no view types")

  /** Arrow Java's value of `vector` at `row`, as [[sparkValue]] writes Spark's. */
  private def arrowValue(vector: FieldVector, row: Int): String = vector.getObject(row) match {
    case null => "null"
    case bytes: Array[Byte] => "bytes:" + new String(bytes, UTF_8)
    case list: java.util.List[_] => list.toArray.mkString("[", ",", "]")
    case map: java.util.Map[_, _] => // a struct's value
      val children = vector.getChildrenFromFields
      (0 until children.size())
        .map(j => s"${children.get(j).getName}=${arrowValue(children.get(j), row)}")
        .mkString("{", ",", "}")
    case other => other.toString
  }

  private def arrowRows(root: VectorSchemaRoot): Seq[Seq[String]] =
    (0 until root.getRowCount).map { r =>
      (0 until root.getFieldVectors.size()).map(i => arrowValue(root.getVector(i), r))
    }

  /** `EncodedColumns.views`'s rows as Arrow Java reads them, and its stream as Quiver writes it. */
  private def viewsAndStream(): (Seq[Seq[String]], Array[Byte]) = {
    val allocator = new RootAllocator()
    try {
      val root = EncodedColumns.views(allocator)
      try {
        val stream = ArrowIpc.encode(root, null, SparkCodec(spark.sparkContext.getConf))
        (arrowRows(root), stream)
      } finally root.close()
    } finally allocator.close()
  }

  test("a broadcast's view columns read as Spark strings, binaries and arrays") {
    assumeViews()
    val (expected, stream) = viewsAndStream()
    assert(expected(0) == Seq("short", "bytes:short", "[2,3]", "[2,3]"), expected(0))
    val broadcast = spark.sparkContext.broadcast(Array(stream))
    try {
      val (types, rows) = spark.sparkContext
        .parallelize(Seq(1), 1)
        .mapPartitions { _ =>
          val batches = ColumnarBatches.read(broadcast, TaskContext.get(), shareDecoded = true)
          val all = batches.keepAll()
          val columnTypes = (0 until all.head.numCols()).map(all.head.column(_).dataType())
          Iterator((columnTypes, all.flatMap(sparkRows)))
        }
        .collect()
        .head
      assert(
        types == Seq(
          StringType,
          BinaryType,
          ArrayType(IntegerType, containsNull = true),
          ArrayType(IntegerType, containsNull = true)
        )
      )
      assert(rows == expected)
    } finally broadcast.destroy()
  }

  test("a batch handed to Spark as the shuffle read does reads its views in place") {
    assumeViews()
    withAllocator { allocator =>
      val root = EncodedColumns.views(allocator)
      try {
        val batch = SparkBatches.toColumnarBatch(root)
        (0 until batch.numCols()).foreach { i =>
          assert(batch.column(i).isInstanceOf[ValidatedColumnVector], batch.column(i))
        }
        assert(sparkRows(batch) == arrowRows(root))
      } finally root.close()
    }
  }

  /**
   * A one-stream broadcast of a dictionary-encoded column "d" (indices 1, null, 0) whose dictionary
   * holds `values`, read in a task: the values of its one column and its Spark type, or Quiver's
   * error.
   */
  private def readDictionaryBroadcast(
      values: FieldVector
  ): Either[String, (DataType, Seq[String])] = {
    val encoding = new DictionaryEncoding(7L, false, new ArrowType.Int(32, true))
    val allocator = new RootAllocator()
    val stream =
      try {
        val field = new Field("d", new FieldType(true, new ArrowType.Int(32, true), encoding), null)
        val root = VectorSchemaRoot.create(new Schema(java.util.Arrays.asList(field)), allocator)
        try {
          val indices = root.getVector("d").asInstanceOf[IntVector]
          indices.allocateNew(3)
          indices.set(0, 1)
          indices.setNull(1)
          indices.set(2, 0)
          root.setRowCount(3)
          val dictionaries =
            new DictionaryProvider.MapDictionaryProvider(new Dictionary(values, encoding))
          ArrowIpc.encode(root, dictionaries, SparkCodec(spark.sparkContext.getConf))
        } finally root.close()
      } finally allocator.close()
    val broadcast = spark.sparkContext.broadcast(Array(stream))
    try
      spark.sparkContext
        .parallelize(Seq(1), 1)
        .mapPartitions { _ =>
          val read =
            try {
              val all =
                ColumnarBatches.read(broadcast, TaskContext.get(), shareDecoded = true).keepAll()
              Right((all.head.column(0).dataType(), all.flatMap(sparkRows).map(_.head)))
            } catch { case e: IpcFormatException => Left(e.getMessage) }
          Iterator(read)
        }
        .collect()
        .head
    finally broadcast.destroy()
  }

  test("a dictionary whose values are string views reads as the values' strings") {
    assumeViews()
    val allocator = new RootAllocator()
    val values =
      Field.nullable("values", EncodedColumns.arrowType("Utf8View")).createVector(allocator)
    try {
      values.allocateNew()
      EncodedColumns.setBytes(values, 0, "short".getBytes(UTF_8))
      EncodedColumns.setBytes(values, 1, "a dictionary value of 33 bytes...".getBytes(UTF_8))
      values.setValueCount(2)
      val read = readDictionaryBroadcast(values)
      assert(read == Right((StringType, Seq("a dictionary value of 33 bytes...", "null", "short"))))
    } finally {
      values.close()
      allocator.close()
    }
  }

  test("a dictionary whose values are a union is refused by the column's name") {
    val allocator = new RootAllocator()
    // Made by Arrow's own union writer: the type ids its field declares are those it writes.
    val values = UnionVector.empty("values", allocator)
    try {
      val int = new NullableIntHolder()
      int.isSet = 1
      for (i <- 0 until 2) {
        int.value = 40 + i
        values.setSafe(i, int)
      }
      values.setValueCount(2)
      val read = readDictionaryBroadcast(values)
      assert(read.left.exists(_.contains("broadcast stream 0: column d has type Union")), read)
    } finally {
      values.close()
      allocator.close()
    }
  }

  test("a string view column whose values are all inline has no data buffer to read") {
    assumeViews()
    withAllocator { allocator =>
      val root = VectorSchemaRoot.create(
        new Schema(
          java.util.Arrays.asList(Field.nullable("v", EncodedColumns.arrowType("Utf8View")))
        ),
        allocator
      )
      try {
        val v = root.getVector("v")
        v.allocateNew()
        EncodedColumns.setBytes(v, 0, "twelve bytes".getBytes(UTF_8))
        EncodedColumns.setBytes(v, 2, Array.emptyByteArray)
        v.setValueCount(3)
        root.setRowCount(3)
        assert(v.getFieldBuffers.size() == 2, "the column has data buffers")
        assert(
          sparkRows(SparkBatches.toColumnarBatch(root)) == Seq(
            Seq("twelve bytes"),
            Seq("null"),
            Seq("")
          )
        )
      } finally root.close()
    }
  }

  /**
   * A struct "s" of a Utf8View "v" and `other` (an int "n", or a column Quiver's columns do not
   * read), three rows: a short and a long string and a null struct.
   */
  private def viewInStruct(allocator: BufferAllocator, other: Field): VectorSchemaRoot = {
    val view = Field.nullable("v", EncodedColumns.arrowType("Utf8View"))
    val struct = new Field(
      "s",
      FieldType.nullable(ArrowType.Struct.INSTANCE),
      java.util.Arrays.asList(view, other)
    )
    val root = VectorSchemaRoot.create(new Schema(java.util.Arrays.asList(struct)), allocator)
    val s = root.getVector("s").asInstanceOf[StructVector]
    s.allocateNew()
    val v = s.getChild("v")
    EncodedColumns.setBytes(v, 0, "inline".getBytes(UTF_8))
    EncodedColumns.setBytes(v, 1, "a value of more than twelve bytes".getBytes(UTF_8))
    v.setValueCount(3)
    s.getChild(other.getName) match {
      case ints: IntVector =>
        ints.setSafe(0, 7)
        ints.setSafe(1, -7)
      case _ =>
    }
    s.getChild(other.getName).setValueCount(3)
    s.setIndexDefined(0)
    s.setIndexDefined(1)
    s.setNull(2)
    s.setValueCount(3)
    root.setRowCount(3)
    root
  }

  test("a view inside a struct reads as a Spark struct's string") {
    assumeViews()
    withAllocator { allocator =>
      val root = viewInStruct(allocator, Field.nullable("n", new ArrowType.Int(32, true)))
      try {
        val batch = SparkBatches.toColumnarBatch(root)
        assert(
          batch.column(0).dataType() == StructType(
            Seq(StructField("v", StringType), StructField("n", IntegerType))
          )
        )
        val rows = sparkRows(batch)
        assert(rows == arrowRows(root))
        assert(
          rows.map(_.head) == Seq(
            "{v=inline,n=7}",
            "{v=a value of more than twelve bytes,n=-7}",
            "null"
          )
        )
      } finally root.close()
    }
  }

  test("a view inside a column Quiver's columns do not read is refused naming both") {
    assumeViews()
    withAllocator { allocator =>
      // Spark's ArrowColumnVector reads LargeUtf8; Quiver's columns do not.
      val root = viewInStruct(allocator, Field.nullable("large", ArrowType.LargeUtf8.INSTANCE))
      try {
        val e = intercept[IpcFormatException](SparkBatches.toColumnarBatch(root))
        assert(e.getMessage.contains("column s.v has type Utf8View"), e.getMessage)
        assert(e.getMessage.contains("they do not read s.large (LargeUtf8)"), e.getMessage)
      } finally root.close()
    }
  }
}

/** Spark's side, in an object: the broadcast test's task uses it. */
private object ViewColumnsSuite {

  /** Spark's value of `row`'s field `i` of type `dataType`, after Spark's own unsafe projection. */
  def sparkValue(
      row: org.apache.spark.sql.catalyst.InternalRow,
      i: Int,
      dataType: DataType
  ): String =
    if (row.isNullAt(i)) "null"
    else
      dataType match {
        case StringType => row.getUTF8String(i).toString
        case BinaryType => "bytes:" + new String(row.getBinary(i), UTF_8)
        case IntegerType => row.getInt(i).toString
        case ArrayType(IntegerType, _) => row.getArray(i).toIntArray().mkString("[", ",", "]")
        case struct: StructType =>
          val inner = row.getStruct(i, struct.size)
          struct.fields.zipWithIndex
            .map { case (f, j) => s"${f.name}=${sparkValue(inner, j, f.dataType)}" }
            .mkString("{", ",", "}")
        case other => throw new IllegalArgumentException(s"no reader for $other in this test")
      }

  /** Every row of `batch`, projected to unsafe rows by Spark with the columns' own types. */
  def sparkRows(batch: ColumnarBatch): Seq[Seq[String]] = {
    val schema = StructType((0 until batch.numCols()).map { i =>
      StructField(s"c$i", batch.column(i).dataType())
    })
    val project = UnsafeProjection.create(schema)
    (0 until batch.numRows()).map { r =>
      val row = project(batch.getRow(r))
      schema.fields.indices.map(i => sparkValue(row, i, schema(i).dataType))
    }
  }
}
