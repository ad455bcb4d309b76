package org.apache.spark.sql.quiver.vectors

import java.io.ByteArrayOutputStream
import java.nio.channels.Channels
import java.nio.charset.StandardCharsets
import java.util.Arrays

import dev.quiver.codec.StreamCodec
import dev.quiver.ipc.{ArrowIpc, DecodedStream}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{
  BitVectorHelper,
  FieldVector,
  IntVector,
  VarCharVector,
  VectorLoader,
  VectorSchemaRoot,
  VectorUnloader
}
import org.apache.arrow.vector.complex.{ListVector, StructVector}
import org.apache.arrow.vector.dictionary.DictionaryEncoder
import org.apache.arrow.vector.ipc.WriteChannel
import org.apache.arrow.vector.ipc.message.{ArrowFieldNode, ArrowRecordBatch, MessageSerializer}
import org.apache.arrow.vector.types.IntervalUnit
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.spark.TaskContext
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.quiver.{
  ArrowStreamEncoder,
  QuiverSparkSession,
  SparkBatches,
  SparkCodec,
  SparkRows
}
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.sql.quiver.join.DictionaryStreams
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}
import org.apache.spark.sql.quiver.ArrowAllocators.withAllocator
import org.scalatest.funsuite.AnyFunSuite

/**
 * [[ValidatedColumnVector]]s read what Spark's `ArrowColumnVector` reads, value for value, on every
 * type Quiver's schemas produce, and on the shapes a validated decode lets through (offsets that
 * start past 0, children longer than their parents, columns sent without a validity bitmap).
 */
class ValidatedColumnVectorSuite extends AnyFunSuite with QuiverSparkSession {

  /** Every type Quiver's Arrow schemas have, with nulls at every level. */
  private def everyType: DataFrame =
    threePartitionsOf(
      "CASE WHEN id % 11 = 0 THEN NULL ELSE id % 2 = 0 END AS bool",
      "CASE WHEN id % 13 = 0 THEN NULL ELSE CAST(id % 128 AS BYTE) END AS b",
      "CAST(id - 1500 AS SHORT) AS sh",
      "CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id * 7 AS INT) END AS i",
      "id * 1000003 - 77 AS l",
      "CASE WHEN id % 6 = 0 THEN NULL ELSE CAST(id / 7 AS FLOAT) END AS f",
      "CAST(id / 3 AS DOUBLE) - 400 AS dbl",
      "CASE WHEN id % 4 = 0 THEN NULL ELSE CAST((id - 1500) / 3 AS DECIMAL(12, 2)) END AS dec",
      "CAST(id * 123456789012345 - 99 AS DECIMAL(38, 3)) * CAST(1000 AS DECIMAL(10, 0))" +
        " AS wide",
      "CASE WHEN id % 3 = 0 THEN '' WHEN id % 3 = 1 THEN NULL ELSE concat('s-', id) END AS s",
      "CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(repeat('x', CAST(id % 4 AS INT)) AS BINARY)" +
        " END AS bin",
      "CASE WHEN id % 8 = 0 THEN NULL ELSE date_add(DATE'1969-12-25', CAST(id AS INT)) END AS d",
      "timestamp_seconds(id * 1000 - 500000) AS ts",
      "CAST(timestamp_seconds(id * 77) AS TIMESTAMP_NTZ) AS ntz",
      "CAST(NULL AS STRING) AS always_null_string",
      "NULL AS nothing",
      "CASE WHEN id % 10 = 0 THEN NULL ELSE named_struct('x', CAST(id AS INT), 'y', " +
        "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS STRING) END, 'z', " +
        "named_struct('deep', CASE WHEN id % 2 = 0 THEN NULL ELSE id END)) END AS st",
      "CASE WHEN id % 7 = 0 THEN NULL WHEN id % 7 = 1 THEN array() ELSE " +
        "array(id, NULL, id + 1) END AS arr",
      "array(CASE WHEN id % 2 = 0 THEN NULL ELSE array(concat('e', id), NULL) END, array())" +
        " AS nested",
      "array(named_struct('p', id, 'q', CASE WHEN id % 3 = 0 THEN NULL ELSE 'q' END)) AS structs",
      "CASE WHEN id % 5 = 1 THEN NULL WHEN id % 5 = 2 THEN map() ELSE " +
        "map(concat('k', id % 4), CASE WHEN id % 2 = 0 THEN NULL ELSE id END, 'z', -1) END AS m",
      "map(CAST(id AS INT), named_struct('v', array(id))) AS map_of_structs"
    )

  /** `df`'s rows as one uncompressed stream, in batches of `batchRows`. */
  private def streamOf(df: DataFrame, batchRows: Int, allocator: BufferAllocator): Array[Byte] = {
    val rows = df.queryExecution.toRdd.map(_.copy()).collect()
    ArrowStreamEncoder
      .encode(rows.iterator, df.schema, "UTC", batchRows, StreamCodec.NONE, allocator)
      .get
  }

  private def decode(bytes: Array[Byte], allocator: BufferAllocator): DecodedStream =
    ArrowIpc.decode(bytes, StreamCodec.NONE, allocator, "test stream")

  /**
   * Checks every batch of `stream` through one reused set of validated columns, and through
   * validated columns over loaded vectors, against `ArrowColumnVector`s over loaded vectors.
   */
  private def assertSameAsArrow(stream: DecodedStream, allocator: BufferAllocator): Int = {
    val inPlace = ValidatedColumns.forSchema(stream.schema()).get
    var rows = 0
    stream.batches().forEach { batch =>
      val root = VectorSchemaRoot.create(stream.schema(), allocator)
      try {
        new VectorLoader(root).load(batch)
        val expected = SparkBatches.toColumnarBatch(root)
        assertSameBatch(inPlace.load(batch), expected)
        val overVectors = new Array[ColumnVector](root.getFieldVectors.size())
        for (i <- overVectors.indices) {
          overVectors(i) = ValidatedColumns.of(root.getVector(i))
          assert(overVectors(i).isInstanceOf[ValidatedColumnVector], root.getVector(i).getField)
        }
        assertSameBatch(new ColumnarBatch(overVectors, root.getRowCount), expected)
        rows += root.getRowCount
      } finally root.close()
    }
    rows
  }

  private def assertSameBatch(actual: ColumnarBatch, expected: ColumnarBatch): Unit = {
    assert(actual.numRows() == expected.numRows())
    assert(actual.numCols() == expected.numCols())
    for (c <- 0 until expected.numCols()) {
      assertSameColumn(actual.column(c), expected.column(c), s"column $c")
      val dataType = expected.column(c).dataType()
      for (r <- 0 until expected.numRows()) {
        val a = read(actual.getRow(r), c, dataType)
        val e = read(expected.getRow(r), c, dataType)
        assert(a == e, s"column $c ($dataType), row $r")
      }
    }
  }

  /** Types, null counts and the null of every row agree, down through struct children. */
  private def assertSameColumn(
      actual: ColumnVector,
      expected: ColumnVector,
      where: String
  ): Unit = {
    assert(actual.dataType() == expected.dataType(), where)
    assert(actual.hasNull == expected.hasNull, where)
    assert(actual.numNulls == expected.numNulls, where)
    expected.dataType() match {
      case StructType(fields) =>
        fields.indices.foreach(i =>
          assertSameColumn(actual.getChild(i), expected.getChild(i), s"$where.${fields(i).name}")
        )
      case _ =>
    }
  }

  /** A value read through Spark's getters, in a form that compares by content. */
  private def read(from: SpecializedGetters, i: Int, dataType: DataType): Any =
    if (from.isNullAt(i)) null
    else
      dataType match {
        case BooleanType => from.getBoolean(i)
        case ByteType => from.getByte(i)
        case ShortType => from.getShort(i)
        case IntegerType | DateType => from.getInt(i)
        case LongType | TimestampType | TimestampNTZType => from.getLong(i)
        case FloatType => from.getFloat(i)
        case DoubleType => from.getDouble(i)
        case d: DecimalType =>
          val value = from.getDecimal(i, d.precision, d.scale)
          (value.toJavaBigDecimal, value.precision, value.scale)
        case _: StringType => from.getUTF8String(i).toString
        case BinaryType => from.getBinary(i).toSeq
        case ArrayType(element, _) =>
          val array = from.getArray(i)
          (0 until array.numElements()).map(read(array, _, element))
        case MapType(keyType, valueType, _) =>
          val map = from.getMap(i)
          val keys = map.keyArray()
          val values = map.valueArray()
          (0 until map.numElements()).map(j => (read(keys, j, keyType), read(values, j, valueType)))
        case StructType(fields) =>
          val row = from.getStruct(i, fields.length)
          fields.indices.map(j => read(row, j, fields(j).dataType))
        case other => fail(s"no reader for $other")
      }

  test("every type Quiver's schemas produce reads as through ArrowColumnVector, batch by batch") {
    withAllocator { allocator =>
      val df = everyType
      val stream = decode(streamOf(df, 700, allocator), allocator)
      try {
        assert(stream.batches().size() == 5, "3000 rows in batches of 700, the last partial")
        assert(assertSameAsArrow(stream, allocator) == 3000)
      } finally stream.close()
    }
  }

  test("batches of one row and of no row read as through ArrowColumnVector") {
    withAllocator { allocator =>
      val df = everyType.limit(3)
      val stream = decode(streamOf(df, 1, allocator), allocator)
      try assert(assertSameAsArrow(stream, allocator) == 3)
      finally stream.close()
      val empty = decode(streamOf(df, 5, allocator), allocator)
      try {
        val columns = ValidatedColumns.forSchema(empty.schema()).get
        val batch = empty.batches().get(0)
        val noRows = new ArrowRecordBatch(0, nodesOfLength(batch, 0), batch.getBuffers)
        try assert(columns.load(noRows).numRows() == 0)
        finally noRows.close()
      } finally empty.close()
    }
  }

  private def nodesOfLength(
      batch: ArrowRecordBatch,
      length: Int
  ): java.util.List[ArrowFieldNode] = {
    val nodes = new java.util.ArrayList[ArrowFieldNode]()
    batch.getNodes.forEach(_ => nodes.add(new ArrowFieldNode(length.toLong, 0L)))
    nodes
  }

  test("offsets that start past 0 and children longer than their parents read in place") {
    withAllocator { allocator =>
      val schema = new Schema(
        Arrays.asList(
          Field.nullable("s", ArrowType.Utf8.INSTANCE),
          new Field(
            "l",
            FieldType.nullable(ArrowType.List.INSTANCE),
            Arrays.asList(Field.nullable("element", new ArrowType.Int(32, true)))
          ),
          new Field(
            "st",
            FieldType.nullable(ArrowType.Struct.INSTANCE),
            Arrays.asList(Field.nullable("a", new ArrowType.Int(32, true)))
          )
        )
      )
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        // Strings "a", "", null, "bc" stored after three bytes no row points at.
        val s = root.getVector("s").asInstanceOf[VarCharVector]
        s.allocateNew(16, 4)
        val text = "xyzabc".getBytes(StandardCharsets.UTF_8)
        s.getDataBuffer.setBytes(0, text)
        Seq(3, 4, 4, 4, 6).zipWithIndex.foreach { case (o, i) =>
          s.getOffsetBuffer.setInt(4L * i, o)
        }
        Seq(0, 1, 3).foreach(i => BitVectorHelper.setBit(s.getValidityBuffer, i.toLong))
        s.setLastSet(3) // so that setting the count leaves the offsets as written
        // Lists [5, 6], null, [], [7] over elements 0..9, the first two unused.
        val l = root.getVector("l").asInstanceOf[ListVector]
        l.allocateNew()
        val elements = l.getDataVector.asInstanceOf[IntVector]
        elements.allocateNew(10)
        (0 until 10).foreach(i => if (i != 8) elements.set(i, i + 3))
        elements.setValueCount(10)
        Seq(2, 4, 4, 4, 5).zipWithIndex.foreach { case (o, i) =>
          l.getOffsetBuffer.setInt(4L * i, o)
        }
        Seq(0, 2, 3).foreach(i => BitVectorHelper.setBit(l.getValidityBuffer, i.toLong))
        l.setLastSet(3)
        // A struct of four rows, null at 1, whose child has six values.
        val st = root.getVector("st").asInstanceOf[StructVector]
        st.allocateNew()
        val a = st.getChild("a").asInstanceOf[IntVector]
        a.allocateNew(6)
        (0 until 6).foreach(i => if (i != 2) a.set(i, 100 + i))
        Seq(0, 2, 3).foreach(i => BitVectorHelper.setBit(st.getValidityBuffer, i.toLong))
        // The parents set their children's counts to what they point at; widen them after.
        root.setRowCount(4)
        elements.setValueCount(10)
        a.setValueCount(6)
        // As written: children longer than their parents need.
        val unloaded = new VectorUnloader(root).getRecordBatch
        try {
          assert(
            unloaded.getNodes.get(2).getLength == 10 && unloaded.getNodes.get(4).getLength == 6
          )
          val inPlace = ValidatedColumns.forSchema(schema).get.load(unloaded)
          assertSameBatch(inPlace, SparkBatches.toColumnarBatch(root))
          assert(inPlace.column(0).getUTF8String(0).toString == "a")
          assert(inPlace.column(0).getUTF8String(1).toString == "")
          assert(inPlace.column(0).getUTF8String(2) == null)
          assert(inPlace.column(1).getArray(0).toIntArray.toSeq == Seq(5, 6))
          assert(inPlace.column(2).getChild(0).getInt(3) == 103)
        } finally unloaded.close()
        // As decoded: loading sets each child to what its parent points at, offsets kept.
        val stream = decode(ArrowIpc.encode(root, null, StreamCodec.NONE), allocator)
        try {
          val batch = stream.batches().get(0)
          assert(batch.getNodes.get(2).getLength == 5, "the list's elements keep the unused two")
          assert(assertSameAsArrow(stream, allocator) == 4)
        } finally stream.close()
      } finally root.close()
    }
  }

  test("columns sent without a validity bitmap read as having no nulls, or only nulls") {
    withAllocator { allocator =>
      val schema = new Schema(
        Arrays.asList(
          Field.nullable("none_null", new ArrowType.Int(64, true)),
          Field.nullable("all_null", new ArrowType.Int(64, true))
        )
      )
      val values = allocator.buffer(8L * 3)
      val empty = allocator.getEmpty
      try {
        (0 until 3).foreach(i => values.setLong(8L * i, 10L + i))
        values.writerIndex(8L * 3) // the serializer writes a buffer's written bytes
        // Arrow's IPC convention: a bitmap may be left out when no value, or every value, is null.
        val raw = new ArrowRecordBatch(
          3,
          Arrays.asList(new ArrowFieldNode(3, 0), new ArrowFieldNode(3, 3)),
          Arrays.asList(empty, values, empty, values)
        )
        try {
          val bytes = new ByteArrayOutputStream()
          val channel = new WriteChannel(Channels.newChannel(bytes))
          MessageSerializer.serialize(channel, schema)
          MessageSerializer.serialize(channel, raw)
          channel.writeIntLittleEndian(-1) // end of stream: continuation, then a zero length
          channel.writeIntLittleEndian(0)
          // As the batch came (no bitmaps), and as the decode stored it.
          val inPlace = ValidatedColumns.forSchema(schema).get.load(raw)
          assert(!inPlace.column(0).hasNull && !inPlace.column(0).isNullAt(2))
          assert(inPlace.column(0).getLong(2) == 12L)
          assert(inPlace.column(1).numNulls == 3 && inPlace.column(1).isNullAt(0))
          val stream = decode(bytes.toByteArray, allocator)
          try assert(assertSameAsArrow(stream, allocator) == 3)
          finally stream.close()
        } finally raw.close()
      } finally values.close()
    }
  }

  test("decoded dictionary values read as through ArrowColumnVector") {
    withAllocator { allocator =>
      DictionaryStreams.encode(spark).foreach { compressed =>
        val codec = SparkCodec(spark.sparkContext.getConf)
        val stream = ArrowIpc.decode(compressed, codec, allocator, "dictionary stream")
        try {
          assert(ValidatedColumns.forSchema(stream.schema()).isEmpty, "indices are not values")
          stream.batches().forEach { batch =>
            val root = VectorSchemaRoot.create(stream.schema(), allocator)
            try {
              new VectorLoader(root).load(batch)
              val indices: FieldVector = root.getVector("color")
              val encoding = indices.getField.getDictionary
              val values = DictionaryEncoder.decode(indices, stream.lookup(encoding.getId))
              try {
                val actual = ValidatedColumns.of(values)
                assert(actual.isInstanceOf[ValidatedColumnVector])
                assertSameBatch(
                  new ColumnarBatch(Array(actual), root.getRowCount),
                  new ColumnarBatch(Array(new ArrowColumnVector(values)), root.getRowCount)
                )
              } finally values.close()
            } finally root.close()
          }
        } finally stream.close()
      }
    }
  }

  test("a type only ArrowColumnVector reads keeps ArrowColumnVector") {
    withAllocator { allocator =>
      // Year-month intervals: Spark's Arrow vectors read them on every release, Quiver's do not.
      val field = Field.nullable("months", new ArrowType.Interval(IntervalUnit.YEAR_MONTH))
      assert(ValidatedColumns.column(field).isEmpty)
      val vector = field.createVector(allocator)
      try assert(ValidatedColumns.of(vector).isInstanceOf[ArrowColumnVector])
      finally vector.close()
    }
  }

  test("columns for one schema are made afresh for each reader, the schema's work done once") {
    withAllocator { allocator =>
      val bytes = streamOf(everyType, 1000, allocator)
      val stream = decode(bytes, allocator)
      val again = decode(bytes, allocator)
      try {
        // Two readers of one schema (tasks of one entry) and of an equal one (another entry).
        val first = ValidatedColumns.forSchema(stream.schema()).get
        val second = ValidatedColumns.forSchema(stream.schema()).get
        val third = ValidatedColumns.forSchema(again.schema()).get
        val firstBatch = first.load(stream.batches().get(0))
        second.load(stream.batches().get(1))
        third.load(again.batches().get(2))
        val root = VectorSchemaRoot.create(stream.schema(), allocator)
        try {
          new VectorLoader(root).load(stream.batches().get(0))
          // Loading the others' batches left the first reader's columns on its own batch.
          assertSameBatch(firstBatch, SparkBatches.toColumnarBatch(root))
        } finally root.close()
      } finally {
        again.close()
        stream.close()
      }
    }
  }

  test("a batch that does not hold what its columns need is refused when loaded, not read") {
    withAllocator { allocator =>
      val stream = decode(streamOf(everyType.selectExpr("l", "s"), 100, allocator), allocator)
      try {
        val batch = stream.batches().get(0)
        val columns = ValidatedColumns.forSchema(stream.schema()).get
        val longer = new ArrowRecordBatch(5000, nodesOfLength(batch, 5000), batch.getBuffers)
        try {
          val e = intercept[IllegalStateException](columns.load(longer))
          // The first column's values are longs: 5000 of them do not fit its 100-value buffer.
          assert(e.getMessage.contains("LongType data buffer has"), e.getMessage)
          assert(e.getMessage.contains("40000 needed"), e.getMessage)
        } finally longer.close()
        val tooFew = new ArrowRecordBatch(100, batch.getNodes, batch.getBuffers.subList(0, 3))
        try intercept[IllegalStateException](columns.load(tooFew))
        finally tooFew.close()
      } finally stream.close()
    }
  }

  test("a task's batches reuse one set of columns per stream; keepAll's are each their own") {
    val df = everyType.selectExpr("l", "s", "arr", "st")
    val codec = SparkCodec(spark.sparkContext.getConf)
    val allocator = new RootAllocator()
    val streams =
      try
        Seq(0L, 1L).map { half =>
          val rows = df.where(s"pmod(l, 2) = $half").queryExecution.toRdd.map(_.copy()).collect()
          ArrowStreamEncoder.encode(rows.iterator, df.schema, "UTC", 400, codec, allocator).get
        }
      finally allocator.close()
    val broadcast = spark.sparkContext.broadcast(streams.toArray)
    val schema = df.schema
    val expected = SparkRows.sorted(df.collect().toSeq)
    try {
      val (distinctPerPass, rows, keptDistinct, keptRows) = spark.sparkContext
        .parallelize(Seq(1), 1)
        .mapPartitions { _ =>
          val context = TaskContext.get()
          val passed = ColumnarBatches
            .read(broadcast, context, shareDecoded = true)
            .map { b =>
              (System.identityHashCode(b), SparkRows.fromBatch(b, schema))
            }
            .toVector
          val kept = ColumnarBatches.read(broadcast, context, shareDecoded = true).keepAll()
          // Read only after the last batch was fetched: each kept batch is still its own.
          val keptRows = kept.flatMap(SparkRows.fromBatch(_, schema))
          Iterator(
            (
              passed.map(_._1).distinct.size,
              passed.flatMap(_._2),
              kept.map(System.identityHashCode).distinct.size,
              keptRows
            )
          )
        }
        .collect()
        .head
      assert(distinctPerPass == 2, "one batch object per stream")
      assert(SparkRows.sorted(rows) == expected, "rows read batch by batch")
      assert(keptDistinct == 8, "3000 rows in two streams of four batches of at most 400")
      assert(SparkRows.sorted(keptRows) == expected)
    } finally broadcast.destroy()
  }
}
