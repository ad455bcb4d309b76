package org.apache.spark.sql.comet.quiverbench

import java.io.InputStream
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicLong

import dev.quiver.bench.PeerBroadcastReader
import dev.quiver.spark.QuiverMetrics
import org.apache.spark.SparkContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.comet.{CometBatchRDD, CometBroadcastValue}
import org.apache.spark.sql.comet.quiver.QuiverCometBatchRDD
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.util.io.ChunkedByteBuffer

/**
 * Comet 1.2.0's broadcast read path, as its broadcast exchange feeds its operators: a
 * `CometBroadcastValue` of the compressed streams, read by `CometBatchRDD` with or without its
 * shared decoding. In a package under Comet's `org.apache.spark.sql.comet` because
 * `CometBroadcastValue` is private to it (and `ChunkedByteBuffer` to Spark); test code only,
 * loaded by name from [[PeerBroadcastReader.comet]].
 */
class CometBroadcastReader extends CometValueReader {

  private val opened = new AtomicLong()

  override def name: String = "Comet"

  override protected def chunksOf(streams: Array[Array[Byte]]): Array[ChunkedByteBuffer] =
    // A decode opens every stream once; counting the first's openings counts decodes.
    streams.zipWithIndex.map {
      case (bytes, 0) => new CountedChunks(ByteBuffer.wrap(bytes), opened)
      case (bytes, _) => new ChunkedByteBuffer(ByteBuffer.wrap(bytes))
    }

  override protected def read(
      sc: SparkContext,
      value: Broadcast[CometBroadcastValue],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch] = new CometBatchRDD(sc, partitions, value, shareDecoded)

  override def decodes: Long = opened.get()
}

/** A reader of a `CometBroadcastValue` of the streams, broadcast as Comet's exchange would. */
abstract class CometValueReader extends PeerBroadcastReader {

  /** Each stream's bytes as the value holds them. */
  protected def chunksOf(streams: Array[Array[Byte]]): Array[ChunkedByteBuffer] =
    streams.map(bytes => new ChunkedByteBuffer(ByteBuffer.wrap(bytes)))

  /** The batches of every task, read from `value`. */
  protected def read(
      sc: SparkContext,
      value: Broadcast[CometBroadcastValue],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch]

  final override def rdd(
      sc: SparkContext,
      streams: Array[Array[Byte]],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch] =
    read(sc, sc.broadcast(new CometBroadcastValue(chunksOf(streams))), partitions, shareDecoded)
}

/** One stream's bytes, counting how often Comet opens them (once per decode). */
private class CountedChunks(bytes: ByteBuffer, opened: AtomicLong)
    extends ChunkedByteBuffer(Array(bytes)) {

  override def toInputStream(dispose: Boolean): InputStream = {
    opened.incrementAndGet()
    super.toInputStream(dispose)
  }
}

/**
 * Comet on Quiver's read of the same bytes: the `CometBroadcastValue` Comet's exchange would make,
 * read by the adapter's RDD through Quiver's cache into Comet's vectors, as Comet's native join
 * takes them. Its decodes are the cache's. Loaded by name from [[PeerBroadcastReader.cometOnQuiver]].
 */
class CometOnQuiverReader extends CometValueReader {

  override def name: String = PeerBroadcastReader.CometOnQuiver

  override protected def read(
      sc: SparkContext,
      value: Broadcast[CometBroadcastValue],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch] = new QuiverCometBatchRDD(sc, partitions, value, shareDecoded)

  override def decodes: Long = {
    val counters = QuiverMetrics.broadcastCache
    counters.decodes() + counters.privateDecodes()
  }
}
