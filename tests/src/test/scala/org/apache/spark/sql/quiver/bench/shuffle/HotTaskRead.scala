package org.apache.spark.sql.quiver.bench.shuffle

import java.io.{ByteArrayInputStream, Closeable, InputStream}
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer

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
  case object CometRaw extends Reader("Comet CometShuffleBlockIterator", decodes = false)
  case object Floor extends Reader("no-copy floor: read into a heap array", decodes = false)

  /** Comet's iterator only where Comet is on the class path (the default profile). */
  val all: Seq[Reader] =
    Seq(QuiverDecode, ChannelDecode, QuiverRaw, ChannelRaw) ++
      (if (CometBlocks.available) Seq(CometRaw) else Nil) :+ Floor
}

/**
 * Comet 1.2.0's `org.apache.comet.CometShuffleBlockIterator`, the JVM half of Comet's native
 * shuffle read, through reflection: Comet is on the default profile's test class path only, and
 * this benchmark compiles on every profile. `hasNext()` reads the next block's header and body into
 * its direct buffer and returns the body's length (the codec tag included), or -1 at the end.
 */
final class CometBlocks(in: InputStream) {
  private val iterator = CometBlocks.constructor.newInstance(in)

  def next(): Int = CometBlocks.hasNext.invoke(iterator).asInstanceOf[Int]

  def body: ByteBuffer = CometBlocks.getBuffer.invoke(iterator).asInstanceOf[ByteBuffer]

  def close(): Unit = iterator.asInstanceOf[Closeable].close()
}

object CometBlocks {

  private lazy val cls: Option[Class[_]] =
    try Some(Class.forName("org.apache.comet.CometShuffleBlockIterator"))
    catch { case _: ClassNotFoundException => None }

  def available: Boolean = cls.isDefined

  private lazy val constructor = cls.get.getConstructor(classOf[InputStream])
  private lazy val hasNext = cls.get.getMethod("hasNext")
  private lazy val getBuffer = cls.get.getMethod("getBuffer")
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
        case Reader.CometRaw =>
          val comet = new CometBlocks(in)
          var length = comet.next()
          while (length >= 0) {
            blocks += 1
            bodyBytes += comet.body.limit()
            length = comet.next()
          }
          comet.close()
        case Reader.Floor =>
          val floor = new ChannelBlockReader(in, direct = false, channel = false)
          while (floor.next()) {
            blocks += 1
            bodyBytes += floor.body.remaining()
          }
          floor.close()
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
