package org.apache.spark.sql.quiver.broadcast

import java.io.InputStream

import dev.quiver.broadcast.BroadcastSource
import dev.quiver.codec.StreamCodec
import dev.quiver.spark.broadcast.BroadcastStreams
import org.apache.spark.broadcast.Broadcast

/**
 * A Spark broadcast whose value holds compressed streams, one per element as `streams` sees them,
 * as an engine broadcasts a build side. The value is fetched (once per executor, by Spark) only
 * when a stream is opened.
 */
private[quiver] class SparkBroadcastSource[T](
    broadcast: Broadcast[T],
    streams: BroadcastStreams[T],
    codec: StreamCodec
) extends BroadcastSource {

  override def broadcastId(): Long = broadcast.id

  override def streamCount(): Int = streams.streamCount(broadcast.value)

  override def openStream(index: Int): InputStream = streams.openStream(broadcast.value, index)

  override def streamLength(index: Int): Long = streams.streamLength(broadcast.value, index)

  override def codec(): StreamCodec = codec
}
