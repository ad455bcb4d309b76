package dev.quiver.spark.broadcast

import dev.quiver.broadcast.BroadcastReader
import org.apache.arrow.vector.{FieldVector, ValueVector}
import org.apache.arrow.vector.dictionary.DictionaryEncoder
import org.apache.spark.sql.quiver.ArrowBatches
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Presents a [[BroadcastReader]] as Spark `ColumnarBatch`es over its views. Each batch is valid
 * until the next `hasNext`; the reader closes the view behind it then, and at task end.
 */
class ColumnarBatches(reader: BroadcastReader) extends Iterator[ColumnarBatch] {

  private var fetched = false
  private var more = false

  override def hasNext: Boolean = {
    if (!fetched) {
      more = reader.next()
      fetched = true
    }
    more
  }

  override def next(): ColumnarBatch = {
    if (!hasNext) throw new NoSuchElementException("no more broadcast batches")
    fetched = false
    ArrowBatches.toColumnarBatch(reader.current(), plain)
  }

  /**
   * Every remaining batch at once, kept open until the task ends: for consumers that need the
   * whole broadcast together, such as the build side of a hash table.
   */
  def keepAll(): IndexedSeq[ColumnarBatch] = {
    val all = IndexedSeq.newBuilder[ColumnarBatch]
    while (hasNext) {
      all += next()
      reader.keepCurrent()
    }
    all.result()
  }

  /** Spark reads plain vectors only: decode a dictionary-encoded one into a vector of values. */
  private def plain(vector: FieldVector): ValueVector = {
    val encoding = vector.getField.getDictionary
    if (encoding == null) vector
    else {
      val values = DictionaryEncoder.decode(vector, reader.dictionaries().lookup(encoding.getId))
      reader.closeWithView(values)
      values
    }
  }
}
