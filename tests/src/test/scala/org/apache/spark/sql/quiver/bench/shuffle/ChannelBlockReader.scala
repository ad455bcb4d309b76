package org.apache.spark.sql.quiver.bench.shuffle

import java.io.{EOFException, InputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.{Channels, ReadableByteChannel}

import dev.quiver.io.PiecewiseReads
import dev.quiver.shuffle.{BlockCodec, ShuffleBlockFormat}

/**
 * The baselines: read a stream of shuffle blocks the way engines commonly do, or the least a reader
 * can do. Kept in the benchmark only. The body goes into one reused buffer:
 *
 *   - `channel = true`: through `Channels.newChannel`, which copies at most 8 KiB per read and
 *     calls `available()` before every read after the first; into a direct buffer for the raw-block
 *     path (what a native decoder takes) or a heap one for the JVM decode;
 *   - `channel = false`, `direct = false`: the no-copy floor. `InputStream.read` in pieces of up to
 *     64 KiB straight into a heap array: each byte is copied once, by the stream itself, and never
 *     again. A raw-block reader that hands a native engine a direct buffer does at least this much.
 */
final class ChannelBlockReader(in: InputStream, direct: Boolean, channel: Boolean = true) {

  private val source: ReadableByteChannel = if (channel) Channels.newChannel(in) else null

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

  def close(): Unit = if (channel) source.close() else in.close()

  /** Fills `dst`; false if the stream ended before its first byte at a block boundary. */
  private def fill(dst: ByteBuffer, atBoundary: Boolean): Boolean = {
    var ended = false
    if (channel) {
      while (dst.hasRemaining && !ended)
        if (source.read(dst) < 0) ended = true
    } else {
      val wanted = dst.remaining()
      val got =
        PiecewiseReads.readFully(in, dst.array(), dst.arrayOffset() + dst.position(), wanted)
      dst.position(dst.position() + got)
      ended = got < wanted
    }
    if (ended && !(atBoundary && dst.position() == 0)) {
      throw new EOFException("shuffle stream ended inside a block")
    }
    !ended
  }
}
