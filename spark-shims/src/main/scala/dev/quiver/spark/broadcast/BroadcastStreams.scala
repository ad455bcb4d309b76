package dev.quiver.spark.broadcast

import java.io.{InputStream, SequenceInputStream}
import java.nio.ByteBuffer

import dev.quiver.annotation.Public
import dev.quiver.io.{ArrayInputStream, ByteBufferInputStream}
import org.apache.spark.sql.quiver.SparkPrivateTypes.ChunkedByteBuffer

/**
 * How to see the compressed streams in the value of an engine's broadcast, one element per stream,
 * each compressed with Spark's codec (`spark.io.compression.codec`). The streams are read in place:
 * an adapter never copies the value.
 *
 * @tparam T the broadcast's value
 */
@Public
abstract class BroadcastStreams[-T] extends Serializable {

  def streamCount(value: T): Int

  /** Stream `index` of `value`, as broadcast; the caller closes it. */
  def openStream(value: T, index: Int): InputStream

  /** The bytes stream `index` holds, or -1 if unknown (see `BroadcastSource.streamLength`). */
  def streamLength(value: T, index: Int): Long

  /**
   * These streams, seen in a part of another value: `BroadcastStreams.byteArrays.from((v:
   * MyValue) => v.streams)` reads an engine's value whose streams are one of its fields. `view`
   * runs on the executors, so it must be serializable (Scala's and Java's lambdas are).
   */
  def from[U](view: U => T): BroadcastStreams[U] = {
    val streams = this
    new BroadcastStreams[U] {
      override def streamCount(value: U): Int = streams.streamCount(view(value))
      override def openStream(value: U, index: Int): InputStream =
        streams.openStream(view(value), index)
      override def streamLength(value: U, index: Int): Long =
        streams.streamLength(view(value), index)
    }
  }
}

@Public
object BroadcastStreams {

  /** One byte array per stream, as `ArrowBroadcast` broadcasts them. */
  val byteArrays: BroadcastStreams[Array[Array[Byte]]] = new BroadcastStreams[Array[Array[Byte]]] {
    override def streamCount(value: Array[Array[Byte]]): Int = value.length
    // An array stream: Quiver's lz4 reader decompresses from the broadcast's bytes in place.
    override def openStream(value: Array[Array[Byte]], index: Int): InputStream =
      new ArrayInputStream(value(index))
    override def streamLength(value: Array[Array[Byte]], index: Int): Long =
      value(index).length.toLong
  }

  /** One `ByteBuffer` per stream, its remaining bytes, heap or direct. */
  val byteBuffers: BroadcastStreams[Array[ByteBuffer]] = new BroadcastStreams[Array[ByteBuffer]] {
    override def streamCount(value: Array[ByteBuffer]): Int = value.length
    override def openStream(value: Array[ByteBuffer], index: Int): InputStream =
      ByteBufferInputStream.of(value(index))
    override def streamLength(value: Array[ByteBuffer], index: Int): Long =
      value(index).remaining().toLong
  }

  /** One Spark `ChunkedByteBuffer` per stream, as Comet broadcasts them: read chunk by chunk. */
  val chunkedByteBuffers: BroadcastStreams[Array[ChunkedByteBuffer]] =
    new BroadcastStreams[Array[ChunkedByteBuffer]] {
      override def streamCount(value: Array[ChunkedByteBuffer]): Int = value.length
      override def openStream(value: Array[ChunkedByteBuffer], index: Int): InputStream =
        value(index).getChunks() match {
          case Array(only) => ByteBufferInputStream.of(only)
          case chunks =>
            val each = chunks.iterator.map(ByteBufferInputStream.of)
            new SequenceInputStream(new java.util.Enumeration[InputStream] {
              override def hasMoreElements: Boolean = each.hasNext
              override def nextElement(): InputStream = each.next()
            })
        }
      override def streamLength(value: Array[ChunkedByteBuffer], index: Int): Long =
        value(index).size
    }
}
