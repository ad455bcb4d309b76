package org.apache.spark.sql.quiver

import java.nio.charset.StandardCharsets

import dev.quiver.ipc.{ArrowIpc, IpcFormatException}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{IntVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.{StructVector, UnionVector}
import org.apache.arrow.vector.types.UnionMode
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.spark.TaskContext
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.sql.quiver.ArrowAllocators.withAllocator
import org.scalatest.funsuite.AnyFunSuite

/**
 * A decoded stream with a column Spark cannot read (a union; a view where Quiver's columns do not
 * read it: `ViewColumnsSuite`) is refused with Quiver's error naming the column, before Spark
 * reads a row: on the broadcast read path and the shuffle's.
 */
class SparkReadableSchemaSuite extends AnyFunSuite with QuiverSparkSession {

  /** A struct column "s" whose child "u" is a sparse union of an int and a string, two rows. */
  private def unionRoot(allocator: BufferAllocator): VectorSchemaRoot = {
    val union = new Field(
      "u",
      FieldType.nullable(new ArrowType.Union(UnionMode.Sparse, Array(0, 1))),
      java.util.Arrays.asList(
        Field.nullable("i", new ArrowType.Int(32, true)),
        Field.nullable("t", ArrowType.Utf8.INSTANCE)
      )
    )
    val struct =
      new Field("s", FieldType.nullable(ArrowType.Struct.INSTANCE), java.util.Arrays.asList(union))
    val root = VectorSchemaRoot.create(
      new Schema(
        java.util.Arrays.asList(Field.nullable("n", new ArrowType.Int(32, true)), struct)
      ),
      allocator
    )
    val n = root.getVector("n").asInstanceOf[IntVector]
    n.allocateNew(2)
    n.set(0, 1)
    n.set(1, 2)
    val s = root.getVector("s").asInstanceOf[StructVector]
    s.allocateNew()
    val u = s.getChildrenFromFields.get(0).asInstanceOf[UnionVector]
    val ints = u.getChildrenFromFields.get(0).asInstanceOf[IntVector]
    val strings = u.getChildrenFromFields.get(1).asInstanceOf[VarCharVector]
    u.getTypeBuffer.setByte(0, 0)
    ints.setSafe(0, 42)
    u.getTypeBuffer.setByte(1, 1)
    strings.setSafe(1, "x".getBytes(StandardCharsets.UTF_8))
    s.setIndexDefined(0)
    s.setIndexDefined(1)
    root.setRowCount(2)
    root
  }

  test("a shuffled batch with a union column is refused naming the column") {
    withAllocator { allocator =>
      val root = unionRoot(allocator)
      try {
        val e = intercept[IpcFormatException](SparkBatches.toColumnarBatch(root))
        assert(e.getMessage.contains("column s.u has type Union(Sparse, [0, 1])"), e.getMessage)
        assert(e.getMessage.contains("no Spark type maps to"), e.getMessage)
      } finally root.close()
    }
  }

  test("a broadcast with a union column is refused in the task before any batch is read") {
    val codec = SparkCodec(spark.sparkContext.getConf)
    val stream = {
      val allocator = new RootAllocator()
      try {
        val root = unionRoot(allocator)
        try ArrowIpc.encode(root, null, codec)
        finally root.close()
      } finally allocator.close()
    }
    val broadcast = spark.sparkContext.broadcast(Array(stream))
    try {
      val outcome = spark.sparkContext
        .parallelize(Seq(1), 1)
        .mapPartitions { _ =>
          val result =
            try {
              val batches = ColumnarBatches.read(broadcast, TaskContext.get(), shareDecoded = true)
              s"read ${batches.size} batches"
            } catch {
              case e: IpcFormatException => e.getMessage
            }
          Iterator(result)
        }
        .collect()
        .head
      assert(outcome.contains("broadcast stream 0: column s.u has type Union"), outcome)
    } finally broadcast.destroy()
  }
}
