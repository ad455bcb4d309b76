package org.apache.spark.sql.quiver.shuffle

import java.io.{FilterInputStream, InputStream, OutputStream}
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicLong

import scala.reflect.ClassTag

import dev.quiver.spark.shuffle.RawShuffleBlock
import org.apache.spark.ShuffleDependency
import org.apache.spark.rdd.RDD
import org.apache.spark.serializer.{DeserializationStream, SerializationStream, SerializerInstance}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Records, JVM-wide (tasks run in the test JVM), how an exchange's readers use the streams Spark
 * hands its reduce side: `available()` calls, the largest length asked for in one read, the
 * largest number of bytes one read returned. [[CountingReads.reading]] reads an exchange through
 * [[CountingSerializer]], which wraps those streams.
 */
object CountingReads {

  val availableCalls = new AtomicLong()
  val largestRequested = new AtomicLong()
  val largestReturned = new AtomicLong()
  val reads = new AtomicLong()

  def reset(): Unit =
    Seq(availableCalls, largestRequested, largestReturned, reads).foreach(_.set(0))

  def wrap(in: InputStream): InputStream = new CountingStream(in)

  /**
   * The reduce side of `exchange` (read with `settings`, as it was built with), over a second
   * shuffle of the same map side whose serializer counts the reads: Spark's own fetch, Quiver's
   * length checks and decompression, the real readers, with only the serializer wrapped.
   */
  def reading(
      exchange: ShuffleExchange,
      settings: ShuffleSettings
  ): (RDD[ColumnarBatch], RDD[RawShuffleBlock]) = {
    val counted = new ShuffleDependency[Int, EncodedBlock, EncodedBlock](
      exchange.dependency.rdd,
      exchange.dependency.partitioner,
      new CountingSerializer
    )
    (
      new DecodedBatchesRDD(counted, settings, exchange.metrics),
      new RawBlocksRDD(counted, settings, exchange.metrics, exchange.schema.length)
    )
  }

  private class CountingStream(in: InputStream) extends FilterInputStream(in) {

    override def available(): Int = {
      availableCalls.incrementAndGet()
      super.available()
    }

    override def read(): Int = {
      record(1, 1)
      super.read()
    }

    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      val n = in.read(b, off, len)
      record(len, n)
      n
    }

    private def record(requested: Int, returned: Int): Unit = {
      reads.incrementAndGet()
      largestRequested.accumulateAndGet(requested.toLong, (a, b) => math.max(a, b))
      largestReturned.accumulateAndGet(returned.toLong, (a, b) => math.max(a, b))
    }
  }
}

/** Quiver's shuffle serializer, with every stream its reduce side reads counted. */
final class CountingSerializer extends ShuffleBlockSerializer {

  override def newInstance(): SerializerInstance = {
    val quiver = super.newInstance()
    new SerializerInstance {
      override def serialize[T: ClassTag](t: T): ByteBuffer = quiver.serialize(t)

      override def deserialize[T: ClassTag](bytes: ByteBuffer): T = quiver.deserialize(bytes)

      override def deserialize[T: ClassTag](bytes: ByteBuffer, loader: ClassLoader): T =
        quiver.deserialize(bytes, loader)

      override def serializeStream(s: OutputStream): SerializationStream =
        quiver.serializeStream(s)

      override def deserializeStream(s: InputStream): DeserializationStream =
        quiver.deserializeStream(CountingReads.wrap(s))
    }
  }
}
