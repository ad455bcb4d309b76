package org.apache.spark.sql.comet.quiverbench

import java.io.InputStream
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicLong

import dev.quiver.bench.PeerBroadcastReader
import dev.quiver.spark.QuiverMetrics
import org.apache.spark.SparkContext
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
class CometBroadcastReader extends PeerBroadcastReader {

  private val opened = new AtomicLong()

  override def name: String = "Comet"

  override def rdd(
      sc: SparkContext,
      streams: Array[Array[Byte]],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch] = {
    // A decode opens every stream once; counting the first's openings counts decodes.
    val chunks: Array[ChunkedByteBuffer] = streams.zipWithIndex.map {
      case (bytes, 0) => new CountedChunks(ByteBuffer.wrap(bytes), opened)
      case (bytes, _) => new ChunkedByteBuffer(ByteBuffer.wrap(bytes))
    }
    val value = sc.broadcast(new CometBroadcastValue(chunks))
    new CometBatchRDD(sc, partitions, value, shareDecoded)
  }

  override def decodes: Long = opened.get()
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
class CometOnQuiverReader extends PeerBroadcastReader {

  override def name: String = PeerBroadcastReader.CometOnQuiver

  override def rdd(
      sc: SparkContext,
      streams: Array[Array[Byte]],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch] = {
    val chunks = streams.map(bytes => new ChunkedByteBuffer(ByteBuffer.wrap(bytes)))
    new QuiverCometBatchRDD(
      sc,
      partitions,
      sc.broadcast(new CometBroadcastValue(chunks)),
      shareDecoded
    )
  }

  override def decodes: Long = {
    val counters = QuiverMetrics.broadcastCache
    counters.decodes() + counters.privateDecodes()
  }
}
