package org.apache.spark.sql.comet.quiver

import dev.quiver.broadcast.BroadcastReader
import dev.quiver.spark.broadcast.{BroadcastStreams, QuiverBroadcasts}
import org.apache.comet.shaded.arrow.memory.BufferAllocator
import org.apache.comet.shaded.arrow.vector.VectorSchemaRoot
import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.comet.CometBroadcastValue
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * What Comet's `CometBatchRDD` is to its broadcast exchange, through Quiver's cache: every partition
 * is the whole broadcast, its batches read from the executor's one decoded copy of the
 * `CometBroadcastValue`'s streams and handed to Comet as its own vectors over the same memory.
 */
private[comet] class QuiverCometBatchRDD(
    sc: SparkContext,
    numPartitions: Int,
    value: Broadcast[CometBroadcastValue],
    shareDecoded: Boolean
) extends RDD[ColumnarBatch](sc, Nil) {

  override protected def getPartitions: Array[Partition] =
    Array.tabulate[Partition](numPartitions)(i => new QuiverCometBatchRDD.Slot(i))

  override def compute(split: Partition, context: TaskContext): Iterator[ColumnarBatch] = {
    val reader = QuiverBroadcasts.open(value, QuiverCometBatchRDD.Streams, shareDecoded)
    new QuiverCometBatchRDD.Batches(reader, context)
  }
}

private[comet] object QuiverCometBatchRDD {

  /** A `CometBroadcastValue`'s streams: one Spark-codec-compressed Arrow IPC stream per chunk. */
  val Streams: BroadcastStreams[CometBroadcastValue] =
    BroadcastStreams.chunkedByteBuffers.from((value: CometBroadcastValue) => value.chunks)

  /** Comet's allocator of the buffers Quiver lends it: accounting only, no memory of its own. */
  lazy val LendingAllocator: BufferAllocator =
    CometCalls.cometAllocator().newChildAllocator("quiver-broadcasts", 0, Long.MaxValue)

  private class Slot(override val index: Int) extends Partition

  /**
   * A task's batches, each valid until the next is asked for (as Comet's own). Comet's native plan
   * exports what it keeps, which keeps the lent buffers until it releases them.
   */
  private class Batches(reader: BroadcastReader, context: TaskContext)
      extends Iterator[ColumnarBatch] {

    private val lent =
      new LentBuffers(() => reader.hold(s"Comet's native plan in task ${context.taskAttemptId()}"))
    private val vectors = new CometVectors(LendingAllocator, lent)
    private var current: VectorSchemaRoot = _
    private var ahead = false
    private var more = false

    // Registered after the cache's own listener (in `QuiverBroadcasts.open`), so it runs before
    // the task's hold on the entry ends: LentBuffers may take a hold past the task then.
    context.addTaskCompletionListener[Unit] { _ =>
      try {
        closeCurrent()
        vectors.close()
      } finally lent.taskEnded()
    }

    override def hasNext: Boolean = {
      if (!ahead) {
        closeCurrent()
        more = reader.next()
        ahead = true
      }
      more
    }

    override def next(): ColumnarBatch = {
      if (!hasNext) throw new NoSuchElementException("no batch left in the broadcast")
      ahead = false
      current = vectors.batch(reader)
      CometCalls.rootAsBatch(current, vectors.dictionaries(reader))
    }

    private def closeCurrent(): Unit = if (current != null) {
      current.close()
      current = null
    }
  }
}
