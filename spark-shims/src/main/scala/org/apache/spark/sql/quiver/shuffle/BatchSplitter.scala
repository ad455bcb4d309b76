package org.apache.spark.sql.quiver.shuffle

import java.io.{ByteArrayOutputStream, IOException}

import dev.quiver.shuffle.{BlockCodec, ShuffleBlockFormat, ShuffleBlockWriter}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.spark.sql.quiver.QuiverConf
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch}

/**
 * The map side of an exchange: splits each input batch by reduce partition and encodes each
 * partition's rows as one block.
 *
 * @param allocator holds the per-partition copies while they are encoded
 */
final private[quiver] class BatchSplitter(
    partitioner: RowPartitioner,
    numPartitions: Int,
    codec: BlockCodec,
    maxBlockBytes: Long,
    allocator: BufferAllocator
) {

  private var partitionOfRow = new Array[Int](0)
  private var rowsByPartition = new Array[Int](0)
  private val rowCounts = new Array[Int](numPartitions)
  private val firstRow = new Array[Int](numPartitions)

  /**
   * The blocks of `batch`, keyed by reduce partition: all encoded before this returns, so the
   * caller may reuse the batch once it has them.
   */
  def split(batch: ColumnarBatch): Seq[(Int, EncodedBlock)] = {
    val rows = batch.numRows()
    if (rows == 0) Nil
    else {
      val vectors = arrowVectors(batch)
      if (partitionOfRow.length < rows) {
        partitionOfRow = new Array[Int](rows)
        rowsByPartition = new Array[Int](rows)
      }
      partitioner.assign(batch, partitionOfRow)
      groupRows(rows)
      val blocks = Seq.newBuilder[(Int, EncodedBlock)]
      var p = 0
      while (p < numPartitions) {
        val count = rowCounts(p)
        if (count == rows && vectors.forall(_.getValueCount == rows)) {
          blocks += p -> encode(wholeBatch(vectors, rows))
        } else if (count > 0) {
          blocks += p -> gatherAndEncode(vectors, firstRow(p), count)
        }
        p += 1
      }
      blocks.result()
    }
  }

  /** Counts rows per partition, and lists row indices partition by partition. */
  private def groupRows(rows: Int): Unit = {
    java.util.Arrays.fill(rowCounts, 0)
    var i = 0
    while (i < rows) {
      rowCounts(partitionOfRow(i)) += 1
      i += 1
    }
    var start = 0
    var p = 0
    while (p < numPartitions) {
      firstRow(p) = start
      start += rowCounts(p)
      p += 1
    }
    val cursor = firstRow.clone()
    i = 0
    while (i < rows) {
      val partition = partitionOfRow(i)
      rowsByPartition(cursor(partition)) = i
      cursor(partition) += 1
      i += 1
    }
  }

  /** The batch as it is, when one partition gets all of it: no copy. Not to be closed. */
  private def wholeBatch(vectors: Array[FieldVector], rows: Int): VectorSchemaRoot =
    new VectorSchemaRoot(javaList(vectors.map(_.getField)), javaList(vectors), rows)

  /** Copies the rows `rowsByPartition[start, start + count)` into new vectors and encodes them. */
  private def gatherAndEncode(
      vectors: Array[FieldVector],
      start: Int,
      count: Int
  ): EncodedBlock = {
    val copies = new Array[FieldVector](vectors.length)
    try {
      var c = 0
      while (c < vectors.length) {
        copies(c) = copyRows(vectors(c), start, count)
        c += 1
      }
      encode(new VectorSchemaRoot(javaList(copies.map(_.getField)), javaList(copies), count))
    } finally copies.foreach(v => if (v != null) v.close())
  }

  private def copyRows(source: FieldVector, start: Int, count: Int): FieldVector = {
    val copy = source.getField.createVector(allocator)
    try {
      copy.setInitialCapacity(count)
      copy.allocateNew()
      val transfer = source.makeTransferPair(copy)
      var i = 0
      while (i < count) {
        transfer.copyValueSafe(rowsByPartition(start + i), i)
        i += 1
      }
      copy.setValueCount(count)
      copy
    } catch {
      case e: Throwable =>
        copy.close()
        throw e
    }
  }

  private def encode(root: VectorSchemaRoot): EncodedBlock = {
    val bytes = new ByteArrayOutputStream()
    new ShuffleBlockWriter(bytes, codec).write(root)
    val length = bytes.size().toLong - ShuffleBlockFormat.LENGTH_FIELD_BYTES
    if (length > maxBlockBytes) {
      throw new IOException(
        s"A $codec shuffle block of ${root.getRowCount} rows takes $length bytes, more than " +
          s"${QuiverConf.ShuffleMaxBlockBytes.key}=$maxBlockBytes; feed the exchange smaller " +
          "batches or raise the setting"
      )
    }
    new EncodedBlock(bytes)
  }

  private def arrowVectors(batch: ColumnarBatch): Array[FieldVector] =
    Array.tabulate(batch.numCols()) { i =>
      batch.column(i) match {
        case arrow: ArrowColumnVector =>
          arrow.getValueVector match {
            case vector: FieldVector => vector
            case other =>
              throw new IllegalArgumentException(
                s"column $i of an input batch is a ${other.getClass.getName}, not a FieldVector"
              )
          }
        case other =>
          throw new IllegalArgumentException(
            "Quiver's shuffle exchange needs Arrow-backed batches (ArrowColumnVector columns); " +
              s"column $i of an input batch is a ${other.getClass.getName}"
          )
      }
    }

  // scala.collection.JavaConverters is deprecated in 2.13 and its replacement is missing in 2.12.
  private def javaList[T](items: Array[T]): java.util.List[T] = {
    val list = new java.util.ArrayList[T](items.length)
    items.foreach(list.add)
    list
  }
}
