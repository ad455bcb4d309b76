package org.apache.spark.sql.quiver.bench.shuffle

import java.io.{EOFException, InputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.{Channels, ReadableByteChannel}

import dev.quiver.shuffle.{BlockCodec, ShuffleBlockFormat}

/**
 * The baseline: reads a stream of shuffle blocks the way engines commonly do, through
 * `Channels.newChannel`, which copies at most 8 KiB per read and calls `available()` before every
 * read after the first. Kept in the benchmark only. The body goes into one reused buffer, direct
 * for the raw-block path (what a native decoder takes) or heap for the JVM decode.
 */
final class ChannelBlockReader(in: InputStream, direct: Boolean) {

  private val channel: ReadableByteChannel = Channels.newChannel(in)

  private val lengthField =
    ByteBuffer.allocate(ShuffleBlockFormat.LENGTH_FIELD_BYTES).order(ByteOrder.LITTLE_ENDIAN)

  private val header =
    ByteBuffer.allocate(ShuffleBlockFormat.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN)
  private val tag = new Array[Byte](ShuffleBlockFormat.TAG_BYTES)
  private var buffer: ByteBuffer = ByteBuffer.allocate(0)

  private var currentCodec: BlockCodec = _
  private var currentFields = 0

  /** Reads the next block; false at the end of the stream. */
  def next(): Boolean = {
    lengthField.clear()
    if (!fill(lengthField, atBoundary = true)) false
    else {
      val length = lengthField.getLong(0)
      header.clear()
      fill(header, atBoundary = false)
      currentFields = header.getLong(0).toInt
      header.position(ShuffleBlockFormat.FIELD_COUNT_BYTES)
      header.get(tag)
      currentCodec = BlockCodec.forTag(tag)
      val bodyLength = (length - ShuffleBlockFormat.HEADER_BYTES).toInt
      if (buffer.capacity() < bodyLength) {
        buffer =
          if (direct) ByteBuffer.allocateDirect(bodyLength) else ByteBuffer.allocate(bodyLength)
      }
      buffer.clear()
      buffer.limit(bodyLength)
      fill(buffer, atBoundary = false)
      buffer.flip()
      true
    }
  }

  def codec: BlockCodec = currentCodec

  def fieldCount: Int = currentFields

  /** The body, from position 0 to its end; reused by `next()`. */
  def body: ByteBuffer = buffer

  def close(): Unit = channel.close()

  /** Fills `dst`; false if the stream ended before its first byte at a block boundary. */
  private def fill(dst: ByteBuffer, atBoundary: Boolean): Boolean = {
    var ended = false
    while (dst.hasRemaining && !ended)
      if (channel.read(dst) < 0) ended = true
    if (ended && !(atBoundary && dst.position() == 0)) {
      throw new EOFException("shuffle stream ended inside a block")
    }
    !ended
  }
}
