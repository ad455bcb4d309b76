package org.apache.spark.sql.quiver.shuffle

import java.io.{FilterInputStream, InputStream, IOException}

import dev.quiver.shuffle.{RawBlockIterator, ShuffleBlockDecoder}
import org.apache.spark.sql.quiver.QuiverRuntime
import org.apache.spark.sql.quiver.shim.SparkShims
import dev.quiver.spark.shuffle.QuiverShuffleMetrics
import org.apache.arrow.memory.BufferAllocator
import org.apache.spark.{ShuffleDependency, TaskContext}
import org.apache.spark.executor.TempShuffleReadMetrics
import org.apache.spark.sql.quiver.SparkTaskScope

/**
 * One reduce task's read of one partition of an exchange: the map outputs Spark's shuffle reader
 * fetches, one [[FetchedStream]] each, and what the task reads them with.
 *
 * Made at the start of the task's read, so that its allocator's completion listener is
 * registered before those of the readers that allocate from it: Spark runs completion listeners
 * last-registered first, so the allocator closes after everything it handed out.
 */
final private[quiver] class ReduceTask(
    dependency: ShuffleDependency[_, _, _],
    val reduceId: Int,
    val context: TaskContext,
    settings: ShuffleSettings,
    val metrics: QuiverShuffleMetrics
) {

  val scope: SparkTaskScope = SparkShims.get.taskScope(context)

  /** Owns every batch the task decodes; closed when the task completes. */
  val allocator: BufferAllocator = {
    val child = QuiverRuntime.allocator.newChildAllocator(
      s"quiver-shuffle-read-${context.taskAttemptId()}",
      0,
      Long.MaxValue
    )
    scope.onCompletion(() => child.close())
    child
  }

  private val readMetrics: TempShuffleReadMetrics =
    context.taskMetrics().createTempShuffleReadMetrics()

  /** Spark's shuffle reader, with Quiver's length checks and lz4 reader ([[ShuffleStreams]]). */
  private val fetched: Iterator[Product2[Any, Any]] =
    ShuffleStreams.read(dependency, reduceId, context, readMetrics)

  private var streamsOpened = 0

  /** Whether another map output remains; may wait for Spark to fetch it. */
  def hasNextStream: Boolean = fetched.hasNext

  /**
   * The next map output's stream, counting the bytes read from it into the metrics. Spark counts
   * it as one record read; the caller counts its records ([[countRecords]]) instead.
   */
  def nextStream(): InputStream = {
    val in = fetched.next() match {
      case (_, stream: FetchedStream) => stream.in
      case other =>
        throw new IllegalStateException(s"unexpected record from the shuffle reader: $other")
    }
    streamsOpened += 1
    readMetrics.incRecordsRead(-1)
    new ByteCounting(in, metrics)
  }

  /** Adds to Spark's records-read metric of the task. */
  def countRecords(records: Long): Unit = readMetrics.incRecordsRead(records)

  /** What the stream last returned by [[nextStream]] is, for error messages. */
  def describeStream: String =
    s"shuffle ${dependency.shuffleId} reduce partition $reduceId, map output stream " +
      s"${streamsOpened - 1} of task ${context.taskAttemptId()}"

  /**
   * Decodes `in` into [[allocator]]; closed at task completion. On Spark 4.x opened so that a kill
   * cannot interrupt the opening and leak it.
   */
  def openDecoder(in: InputStream): ShuffleBlockDecoder = {
    val source = describeStream
    SparkShims.get.openUninterruptibly(context) { () =>
      new ShuffleBlockDecoder(in, allocator, scope, settings.maxBlockBytes, source)
    }
  }

  /**
   * The raw blocks of `in`; closed at task completion.
   *
   * @param fieldCount the exchange schema's number of top-level fields, which every block must
   *   declare (or `RawBlockIterator.ANY_FIELD_COUNT`: the stream's first block's)
   */
  def openRawBlocks(
      in: InputStream,
      fieldCount: Int = RawBlockIterator.ANY_FIELD_COUNT
  ): RawBlockIterator = {
    val source = describeStream
    SparkShims.get.openUninterruptibly(context) { () =>
      new RawBlockIterator(in, scope, settings.maxBlockBytes, source, fieldCount)
    }
  }
}

/**
 * Adds the bytes read through it to the exchange's block bytes metric. Closing it lets go of
 * Spark's stream: a closed reader stays referenced by its task's completion listeners until the
 * task ends, and Spark's decompressing stream holds buffers that one task reading thousands of map
 * outputs must not keep.
 */
private class ByteCounting(stream: InputStream, metrics: QuiverShuffleMetrics)
    extends FilterInputStream(stream) {

  override def read(): Int = {
    val b = open.read()
    if (b >= 0) metrics.blockBytesRead.add(1)
    b
  }

  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    val n = open.read(b, off, len)
    if (n > 0) metrics.blockBytesRead.add(n.toLong)
    n
  }

  override def close(): Unit = {
    val underlying = in
    if (underlying != null) {
      in = null
      underlying.close()
    }
  }

  private def open: InputStream = {
    val underlying = in
    if (underlying == null) throw new IOException("the shuffle stream is closed")
    underlying
  }
}
