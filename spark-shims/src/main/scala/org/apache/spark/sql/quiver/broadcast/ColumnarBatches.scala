package org.apache.spark.sql.quiver.broadcast

import dev.quiver.annotation.Internal
import dev.quiver.broadcast.{BroadcastDecoder, BroadcastReader, DecodedForm}
import dev.quiver.spark.broadcast.BroadcastStreams
import dev.quiver.task.TaskScope
import org.apache.arrow.vector.{FieldVector, ValueVector}
import org.apache.arrow.vector.dictionary.DictionaryEncoder
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.quiver.{QuiverRuntime, SparkReadableSchema}
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.sql.quiver.vectors.ValidatedColumns
import org.apache.spark.sql.vectorized.{ColumnarBatch, ColumnVector}

/**
 * Presents a [[BroadcastReader]] as Spark `ColumnarBatch`es over its batches. Each batch is valid
 * until the next `hasNext`; the reader closes what is behind it then, and at task end.
 *
 * The columns read the decoded buffers in place, without per-value checks (the decode validated
 * them; see `ValidatedColumnVector`). A stream whose fields all have such columns is read with no
 * view at all: its columns and batch are made once per stream and only pointed at each batch's
 * buffers, which the task's hold keeps valid. A stream with a dictionary-encoded field, or a type
 * only `ArrowColumnVector` reads, is read through the reader's views, its columns made per batch.
 */
@Internal
class ColumnarBatches(reader: BroadcastReader) extends Iterator[ColumnarBatch] {

  // Every stream's schema, before any row is read: a column Spark cannot read fails the task here.
  {
    val streams = reader.broadcast().streams()
    var i = 0
    while (i < streams.size()) {
      SparkReadableSchema.check(streams.get(i).schema(), streams.get(i), s"broadcast stream $i")
      i += 1
    }
  }

  private var fetched = false
  private var more = false

  /** The columns of the stream last read in place, reused while its batches last. */
  private var streamColumns: Option[ValidatedColumns] = None
  private var columnsStream = -1

  override def hasNext: Boolean = {
    if (!fetched) {
      more = reader.next()
      fetched = true
    }
    more
  }

  override def next(): ColumnarBatch = nextBatch(reuse = true)

  /**
   * Every remaining batch at once, kept open until the task ends: for consumers that need the
   * whole broadcast together, such as the build side of a hash table.
   */
  def keepAll(): IndexedSeq[ColumnarBatch] = {
    val all = IndexedSeq.newBuilder[ColumnarBatch]
    while (hasNext) all += nextBatch(reuse = false)
    all.result()
  }

  /** @param reuse whether the batch may be the previous one's objects, pointed at new buffers */
  private def nextBatch(reuse: Boolean): ColumnarBatch = {
    if (!hasNext) throw new NoSuchElementException("no more broadcast batches")
    fetched = false
    if (!reuse || columnsStream != reader.streamIndex()) {
      columnsStream = reader.streamIndex()
      streamColumns = ValidatedColumns.forSchema(reader.currentSchema())
    }
    streamColumns match {
      // In place: the buffers stay valid until the task's hold ends, past this batch.
      case Some(columns) => columns.load(reader.currentBatch())
      case None =>
        val view = reader.current()
        val columns = new Array[ColumnVector](view.getFieldVectors.size())
        var i = 0
        while (i < columns.length) {
          columns(i) = ValidatedColumns.of(plain(view.getVector(i)))
          i += 1
        }
        if (!reuse) reader.keepCurrent()
        new ColumnarBatch(columns, view.getRowCount)
    }
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
  ): BroadcastReader =
    QuiverRuntime.broadcastCache
      .open(sourceOf(broadcast), BroadcastDecoder.arrowIpc(), task, shareDecoded)

  /** The engine API's open (`QuiverBroadcasts`): any value, any decoder, in a Spark task. */
  def open[T](
      broadcast: Broadcast[T],
      streams: BroadcastStreams[T],
      decoder: BroadcastDecoder[_ <: DecodedForm],
      context: TaskContext,
      shareDecoded: Boolean
  ): BroadcastReader = QuiverRuntime.broadcastCache.open(
    sourceOf(broadcast, streams),
    decoder,
    SparkShims.get.taskScope(context),
    shareDecoded
  )

  /** `broadcast` as a source read through the executor's one codec, not one made per task. */
  private[quiver] def sourceOf(broadcast: Broadcast[Array[Array[Byte]]]): SparkBroadcastSource[_] =
    sourceOf(broadcast, BroadcastStreams.byteArrays)

  private def sourceOf[T](broadcast: Broadcast[T], streams: BroadcastStreams[T]) =
    new SparkBroadcastSource(broadcast, streams, QuiverRuntime.broadcastCodec)
}
