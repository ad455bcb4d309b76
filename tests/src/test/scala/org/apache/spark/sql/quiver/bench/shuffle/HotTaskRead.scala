package org.apache.spark.sql.quiver.bench.shuffle

import java.io.ByteArrayInputStream
import java.lang.management.ManagementFactory

import dev.quiver.ipc.ArrowIpc
import dev.quiver.spark.shuffle.QuiverShuffleMetrics
import dev.quiver.testing.CountingInputStream
import org.apache.arrow.vector.{VectorLoader, VectorSchemaRoot}
import org.apache.spark.ShuffleDependency
import org.apache.spark.sql.quiver.shuffle.{ReduceTask, ShuffleReadRDD, ShuffleSettings}

/** How a hot task reads its partition: with Quiver's readers or the channel baseline. */
sealed abstract class Reader(val name: String, val decodes: Boolean) extends Serializable

object Reader {
  case object QuiverDecode extends Reader("Quiver ShuffleBlockDecoder", decodes = true)
  case object ChannelDecode extends Reader("Channels.newChannel + same decode", decodes = true)
  case object QuiverRaw extends Reader("Quiver RawBlockIterator", decodes = false)
  case object ChannelRaw extends Reader("Channels.newChannel into direct buffer", decodes = false)

  val all: Seq[Reader] = Seq(QuiverDecode, ChannelDecode, QuiverRaw, ChannelRaw)
}

/**
 * One read of a partition, timed inside the task from the first map output fetched to the last
 * block read.
 *
 * @param rows rows decoded (decoding readers), else 0
 * @param bodyBytes compressed body bytes read
 */
final case class ReadResult(
    reader: Reader,
    wallNanos: Long,
    cpuNanos: Long,
    streams: Int,
    blocks: Long,
    rows: Long,
    bodyBytes: Long,
    availableCalls: Long,
    reads: Long
)

/**
 * Reads each partition of an exchange's shuffle with `reader`, through the same Spark shuffle
 * reader and [[ReduceTask]] as the exchange's own RDDs; only what runs over each fetched stream
 * differs.
 */
class HotTaskRead(
    dependency: ShuffleDependency[_, _, _],
    settings: ShuffleSettings,
    metrics: QuiverShuffleMetrics,
    reader: Reader
) extends ShuffleReadRDD[ReadResult](dependency, settings, metrics) {

  override protected def read(task: ReduceTask): Iterator[ReadResult] = {
    val threads = ManagementFactory.getThreadMXBean
    val counted = new CountingInputStream.Counts
    var streams = 0
    var blocks = 0L
    var rows = 0L
    var bodyBytes = 0L
    val cpuStart = threads.getCurrentThreadCpuTime
    val wallStart = System.nanoTime()
    while (task.hasNextStream) {
      val in = new CountingInputStream(task.nextStream(), counted)
      streams += 1
      reader match {
        case Reader.QuiverDecode =>
          val decoder = task.openDecoder(in)
          while (decoder.next()) {
            blocks += 1
            rows += decoder.root().getRowCount
          }
          decoder.close()
        case Reader.QuiverRaw =>
          val raw = task.openRawBlocks(in)
          while (raw.next()) {
            blocks += 1
            bodyBytes += raw.body().remaining()
          }
          raw.close()
        case Reader.ChannelDecode =>
          val channel = new ChannelBlockReader(in, direct = false)
          while (channel.next()) {
            blocks += 1
            rows += decode(channel, task)
          }
          channel.close()
        case Reader.ChannelRaw =>
          val channel = new ChannelBlockReader(in, direct = true)
          while (channel.next()) {
            blocks += 1
            bodyBytes += channel.body.remaining()
          }
          channel.close()
      }
    }
    val wall = System.nanoTime() - wallStart
    val cpu = threads.getCurrentThreadCpuTime - cpuStart
    Iterator(
      ReadResult(
        reader,
        wall,
        cpu,
        streams,
        blocks,
        rows,
        bodyBytes,
        counted.availableCalls(),
        counted.reads()
      )
    )
  }

  /** What `ShuffleBlockDecoder` does with a body: decode it and load it into vectors. */
  private def decode(channel: ChannelBlockReader, task: ReduceTask): Long = {
    val body = channel.body
    val decoded = ArrowIpc.decode(
      new ByteArrayInputStream(body.array(), body.arrayOffset(), body.remaining()),
      channel.codec,
      task.allocator,
      "benchmark block"
    )
    try {
      val root = VectorSchemaRoot.create(decoded.schema(), task.allocator)
      try {
        new VectorLoader(root).load(decoded.batches().get(0))
        root.getRowCount.toLong
      } finally root.close()
    } finally decoded.close()
  }
}
