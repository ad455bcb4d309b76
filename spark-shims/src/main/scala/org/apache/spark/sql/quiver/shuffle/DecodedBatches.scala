package org.apache.spark.sql.quiver.shuffle

import dev.quiver.shuffle.ShuffleBlockDecoder
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.types.pojo.Schema
import org.apache.arrow.vector.util.VectorSchemaRootAppender
import org.apache.spark.sql.quiver.SparkBatches.toColumnarBatch
import org.apache.spark.sql.quiver.vectors.ViewTypes
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The decoding path of one reduce task: decodes the blocks of every map output in turn and hands
 * them on as `ColumnarBatch`es, appending consecutive small ones into one batch of at most
 * `batchSize` rows. A batch that has `batchSize` rows or more on its own is handed on as decoded.
 *
 * A batch is valid until `hasNext` is called again; the decoders close theirs then, this iterator
 * its coalesced ones, and whatever is open when the task completes is closed by its completion
 * listeners.
 */
final private[quiver] class DecodedBatches(task: ReduceTask, batchSize: Int)
    extends Iterator[ColumnarBatch] {

  private val decoders =
    new MapOutputs[ShuffleBlockDecoder](task, task.openDecoder, _.next())

  /** The decoder's current batch has been decoded but not yet handed on or appended. */
  private var pending = false

  /** Small batches appended so far, not yet handed on. */
  private var coalesced: VectorSchemaRoot = _

  /** The coalesced batch last handed on; closed when the consumer asks for the next one. */
  private var handedOn: VectorSchemaRoot = _

  private var ready: ColumnarBatch = _

  task.scope.onCompletion(() => closeCoalesced())

  override def hasNext: Boolean = {
    if (ready == null) {
      closeHandedOn()
      ready = advance()
    }
    ready != null
  }

  override def next(): ColumnarBatch = {
    if (!hasNext) throw new NoSuchElementException("no more shuffled batches")
    val batch = ready
    ready = null
    task.metrics.batchesOut.add(1)
    batch
  }

  /** The next batch to hand on, or null at the end of the partition. */
  private def advance(): ColumnarBatch = {
    var result: ColumnarBatch = null
    var ended = false
    while (result == null && !ended)
      if (!pending && !decodeNext()) {
        ended = true
        if (coalesced != null) result = handOnCoalesced()
      } else {
        val root = decoders.current.root()
        val rows = root.getRowCount
        if (rows == 0) {
          pending = false
        } else if (coalesced != null && coalesced.getRowCount + rows > batchSize) {
          result = handOnCoalesced() // `root` stays pending for the next call
        } else if (coalesced == null && (rows >= batchSize || !appendable(root))) {
          pending = false
          result = toColumnarBatch(root)
        } else {
          append(root)
          pending = false
        }
      }
    result
  }

  /** Decodes the next block of the current map output, or of the next ones; false at the end. */
  private def decodeNext(): Boolean = {
    pending = decoders.next()
    if (pending) {
      val rows = decoders.current.root().getRowCount.toLong
      task.metrics.rowsRead.add(rows)
      task.countRecords(rows)
    }
    pending
  }

  /** The schema [[appendable]] last saw, and its answer: a partition's batches share one. */
  private var appendableSchema: Schema = _
  private var appendableAnswer = false

  /**
   * Whether Arrow's appender can append `root`'s batches: it has no view types (Arrow 18 and 19's
   * appender throws on list views, 18.1's on string and binary views too), so a batch with one is
   * handed on as decoded, however small.
   */
  private def appendable(root: VectorSchemaRoot): Boolean = {
    val schema = root.getSchema
    if (!(schema eq appendableSchema)) {
      appendableSchema = schema
      appendableAnswer = true
      val fields = schema.getFields
      var i = 0
      while (appendableAnswer && i < fields.size()) {
        appendableAnswer = !ViewTypes.hasView(fields.get(i))
        i += 1
      }
    }
    appendableAnswer
  }

  private def append(root: VectorSchemaRoot): Unit = {
    if (coalesced == null) {
      coalesced = VectorSchemaRoot.create(root.getSchema, task.allocator)
      // Arrow's appender reads the target's first offset, so the target needs its buffers.
      coalesced.allocateNew()
    }
    VectorSchemaRootAppender.append(coalesced, root)
  }

  private def handOnCoalesced(): ColumnarBatch = {
    handedOn = coalesced
    coalesced = null
    toColumnarBatch(handedOn)
  }

  private def closeHandedOn(): Unit =
    if (handedOn != null) {
      handedOn.close()
      handedOn = null
    }

  private def closeCoalesced(): Unit = {
    closeHandedOn()
    if (coalesced != null) {
      coalesced.close()
      coalesced = null
    }
  }
}
