package org.apache.spark.sql.quiver.broadcast

import dev.quiver.annotation.Internal
import dev.quiver.broadcast.BroadcastReader
import dev.quiver.task.TaskScope
import org.apache.arrow.vector.{FieldVector, ValueVector}
import org.apache.arrow.vector.dictionary.DictionaryEncoder
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.quiver.{QuiverRuntime, SparkBatches}
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Presents a [[BroadcastReader]] as Spark `ColumnarBatch`es over its views. Each batch is valid
 * until the next `hasNext`; the reader closes the view behind it then, and at task end.
 */
@Internal
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
    SparkBatches.toColumnarBatch(reader.current(), plain)
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

@Internal
object ColumnarBatches {

  /**
   * Reads the whole broadcast in the current task: the one read path every consumer (joins, plain
   * JVM consumers) goes through.
   */
  def read(
      broadcast: Broadcast[Array[Array[Byte]]],
      context: TaskContext,
      shareDecoded: Boolean
  ): ColumnarBatches = new ColumnarBatches(open(broadcast, context, shareDecoded))

  /** Opens the whole broadcast in the current task, for consumers that derive from it. */
  def open(
      broadcast: Broadcast[Array[Array[Byte]]],
      context: TaskContext,
      shareDecoded: Boolean
  ): BroadcastReader = open(broadcast, SparkShims.get.taskScope(context), shareDecoded)

  /** Opens the whole broadcast for `task`, a Spark task or a read on the driver. */
  def open(
      broadcast: Broadcast[Array[Array[Byte]]],
      task: TaskScope,
      shareDecoded: Boolean
  ): BroadcastReader = QuiverRuntime.broadcastCache.open(sourceOf(broadcast), task, shareDecoded)

  /** `broadcast` as a source read through the executor's one codec, not one made per task. */
  private[quiver] def sourceOf(broadcast: Broadcast[Array[Array[Byte]]]): ArrowBroadcastSource =
    new ArrowBroadcastSource(broadcast, QuiverRuntime.broadcastCodec)
}
