package org.apache.spark.sql.quiver.shuffle

import java.io.{EOFException, InputStream, OutputStream}
import java.nio.ByteBuffer

import scala.reflect.ClassTag

import org.apache.spark.serializer.{
  DeserializationStream,
  SerializationStream,
  Serializer,
  SerializerInstance
}

/**
 * The serializer of a Quiver exchange's shuffle. Map side: each record's value is an
 * [[EncodedBlock]], written as is; the key (the partition id) is not written, as Spark's shuffle
 * writer has already used it to place the record. Reduce side: the deserialize stream hands the
 * stream Spark fetched for one map output, whole, as a single [[FetchedStream]] record, and the
 * exchange's reader runs Quiver's block decoder or raw-block iterator over it.
 */
private[quiver] class ShuffleBlockSerializer extends Serializer with Serializable {

  override def newInstance(): SerializerInstance = new ShuffleBlockSerializerInstance

  /**
   * Each record is one self-contained block, so records may be reordered and concatenated. This
   * also makes Spark's sort shuffle use its serialized writer (or the bypass writer), neither of
   * which deserializes records on the map side.
   */
  override private[spark] def supportsRelocationOfSerializedObjects: Boolean = true
}

/**
 * The blocks Spark fetched from one map output for a reduce task, as one stream; whoever reads it
 * closes it.
 */
final private[quiver] class FetchedStream(val in: InputStream)

private class ShuffleBlockSerializerInstance extends SerializerInstance {

  override def serialize[T: ClassTag](t: T): ByteBuffer = unsupported()

  override def deserialize[T: ClassTag](bytes: ByteBuffer): T = unsupported()

  override def deserialize[T: ClassTag](bytes: ByteBuffer, loader: ClassLoader): T =
    unsupported()

  override def serializeStream(s: OutputStream): SerializationStream =
    new BlockSerializationStream(s)

  override def deserializeStream(s: InputStream): DeserializationStream =
    new FetchedStreamDeserialization(new FetchedStream(s))

  private def unsupported(): Nothing =
    throw new UnsupportedOperationException(
      "Quiver's shuffle serializer writes and reads streams of shuffle blocks only"
    )
}

private class BlockSerializationStream(out: OutputStream) extends SerializationStream {

  override def writeKey[T: ClassTag](key: T): SerializationStream = this

  override def writeValue[T: ClassTag](value: T): SerializationStream = writeObject(value)

  override def writeObject[T: ClassTag](t: T): SerializationStream = {
    t match {
      case block: EncodedBlock => block.writeTo(out)
      case other =>
        throw new IllegalArgumentException(
          s"Quiver's shuffle serializer writes EncodedBlocks only, got ${other.getClass.getName}"
        )
    }
    this
  }

  override def flush(): Unit = out.flush()

  override def close(): Unit = out.close()
}

/** Yields its one [[FetchedStream]] as the value of a single record whose key is null. */
private class FetchedStreamDeserialization(stream: FetchedStream) extends DeserializationStream {

  private var handedOut = false

  override def readKey[T: ClassTag](): T = null.asInstanceOf[T]

  override def readObject[T: ClassTag](): T =
    if (handedOut) throw new EOFException()
    else {
      handedOut = true
      stream.asInstanceOf[T]
    }

  override def close(): Unit = stream.in.close()
}
