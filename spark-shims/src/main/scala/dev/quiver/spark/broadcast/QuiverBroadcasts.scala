package dev.quiver.spark.broadcast

import dev.quiver.annotation.Public
import dev.quiver.broadcast.{BroadcastDecoder, BroadcastReader, DecodedForm}
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The engine API: an engine's broadcast, of any value, read in a Spark task through the executor's
 * cache, exactly as Quiver's own joins read theirs. The task holds the decoded entry until it
 * completes (or, past it, through `BroadcastReader.hold`); the cache's sharing, retention in
 * Spark's storage memory, liveness through the block manager, kills through the task, settings and
 * metrics are wired as the executor's `QuiverPlugin` set them up.
 */
@Public
object QuiverBroadcasts {

  /**
   * Opens `broadcast` in the running task, its streams decoded as Arrow IPC.
   *
   * @param streams how to see the compressed streams in the value (see [[BroadcastStreams]])
   * @param share false to decode for this task alone (Quiver's
   *   `spark.quiver.broadcast.shareDecoded.enabled`, which an engine reads where it plans)
   */
  def open[T](
      broadcast: Broadcast[T],
      streams: BroadcastStreams[T],
      share: Boolean
  ): BroadcastReader =
    open(broadcast, streams, BroadcastDecoder.arrowIpc(), share)

  /**
   * Opens `broadcast` in the running task, decoded by `decoder`: one entry per broadcast and decoder
   * on the executor, whatever the format.
   */
  def open[T](
      broadcast: Broadcast[T],
      streams: BroadcastStreams[T],
      decoder: BroadcastDecoder[_ <: DecodedForm],
      share: Boolean
  ): BroadcastReader = {
    val context = TaskContext.get()
    require(context != null, "QuiverBroadcasts.open reads a broadcast in a Spark task")
    ColumnarBatches.open(broadcast, streams, decoder, context, share)
  }

  /**
   * The reader's batches as Spark `ColumnarBatch`es, each valid until the next `hasNext`: for JVM
   * consumers. Engines that hand Arrow on read the reader's views (`BroadcastReader.current`).
   */
  def columnarBatches(reader: BroadcastReader): Iterator[ColumnarBatch] =
    new ColumnarBatches(reader)

  /** [[columnarBatches]] for callers in Java, with the same batches valid as long. */
  def columnarBatchesAsJava(reader: BroadcastReader): java.util.Iterator[ColumnarBatch] = {
    val batches = columnarBatches(reader)
    new java.util.Iterator[ColumnarBatch] {
      override def hasNext: Boolean = batches.hasNext
      override def next(): ColumnarBatch = batches.next()
    }
  }
}
