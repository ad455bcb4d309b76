package org.apache.spark.sql.quiver.shuffle

import java.util.Random

import dev.quiver.spark.shuffle.ShufflePartitioning
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/** Assigns each row of a batch its reduce partition. One per map task: it may keep state. */
private[quiver] trait RowPartitioner {

  /** Writes the partition of row `i` of `batch` to `partitions(i)`, for every row. */
  def assign(batch: ColumnarBatch, partitions: Array[Int]): Unit
}

private[quiver] object RowPartitioner {

  /** The partitioner of `partitioning` for the map task of input partition `mapIndex`. */
  def apply(partitioning: ShufflePartitioning, schema: StructType, mapIndex: Int): RowPartitioner =
    partitioning match {
      case h: ShufflePartitioning.Hash => new HashRowPartitioner(partitionIdExpression(h, schema))
      case r: ShufflePartitioning.RoundRobin =>
        new RoundRobinRowPartitioner(r.numPartitions, mapIndex)
      case ShufflePartitioning.Single => SingleRowPartitioner
    }

  /**
   * The expression Spark's own `HashPartitioning` evaluates for a row's partition, over the key
   * columns of `schema`: taken from the running Spark, so that the partitions match Spark's on
   * every release (Spark 4.1 hashes collated strings by their collation key, for one).
   */
  def partitionIdExpression(hash: ShufflePartitioning.Hash, schema: StructType): Expression = {
    val keys = hash.keys.toList.map { name =>
      val ordinal = schema.fieldNames.indexOf(name)
      if (ordinal < 0) {
        throw new IllegalArgumentException(
          s"hash key '$name' is not a column of the schema (${schema.fieldNames.mkString(", ")})"
        )
      }
      val field = schema(ordinal)
      BoundReference(ordinal, field.dataType, field.nullable)
    }
    val expression = HashPartitioning(keys, hash.numPartitions).partitionIdExpression
    expression.foreach { e =>
      val check = e.checkInputDataTypes()
      if (check.isFailure) {
        throw new IllegalArgumentException(
          s"Spark cannot hash the keys ${hash.keys.mkString(", ")}: $check"
        )
      }
    }
    expression
  }
}

/** Evaluates the partition id expression, compiled, over each row of the batch. */
private class HashRowPartitioner(partitionId: Expression) extends RowPartitioner {

  private val projection = UnsafeProjection.create(Seq(partitionId))

  override def assign(batch: ColumnarBatch, partitions: Array[Int]): Unit = {
    val rows = batch.numRows()
    var i = 0
    while (i < rows) {
      partitions(i) = projection(batch.getRow(i)).getInt(0)
      i += 1
    }
  }
}

/** Deals rows in turn; each map task starts at a partition of its own, as Spark's does. */
private class RoundRobinRowPartitioner(numPartitions: Int, mapIndex: Int) extends RowPartitioner {

  private var next = new Random(mapIndex.toLong).nextInt(numPartitions)

  override def assign(batch: ColumnarBatch, partitions: Array[Int]): Unit = {
    val rows = batch.numRows()
    var i = 0
    while (i < rows) {
      partitions(i) = next
      next = if (next + 1 == numPartitions) 0 else next + 1
      i += 1
    }
  }
}

private object SingleRowPartitioner extends RowPartitioner {

  override def assign(batch: ColumnarBatch, partitions: Array[Int]): Unit =
    java.util.Arrays.fill(partitions, 0, batch.numRows(), 0)
}
