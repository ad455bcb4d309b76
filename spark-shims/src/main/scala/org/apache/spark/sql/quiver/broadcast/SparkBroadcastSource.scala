package org.apache.spark.sql.quiver.broadcast

import java.io.InputStream

import dev.quiver.broadcast.BroadcastSource
import dev.quiver.codec.StreamCodec
import dev.quiver.io.ArrayInputStream
import org.apache.spark.broadcast.Broadcast

/**
 * A Spark broadcast whose value is an array of compressed Arrow IPC streams, one element per
 * stream, as an engine broadcasts a build side. The value is fetched (once per executor, by
 * Spark) only when a stream is opened.
 */
private[quiver] class ArrowBroadcastSource(
    broadcast: Broadcast[Array[Array[Byte]]],
    codec: StreamCodec
) extends BroadcastSource {

  override def broadcastId(): Long = broadcast.id

  override def streamCount(): Int = broadcast.value.length

  // An array stream: Quiver's lz4 reader decompresses from the broadcast's bytes in place.
  override def openStream(index: Int): InputStream = new ArrayInputStream(broadcast.value(index))

  override def streamLength(index: Int): Long = broadcast.value(index).length.toLong

  override def codec(): StreamCodec = codec
}
