package org.apache.spark.sql.quiver.shuffle

import java.io.{FilterInputStream, InputStream}
import java.util.concurrent.atomic.AtomicLong

/**
 * Wraps every stream an exchange's reduce side reads and records, JVM-wide (tasks run in the test
 * JVM), how the readers use them: `available()` calls, the largest length asked for in one read,
 * the largest number of bytes one read returned.
 */
object CountingReads extends StreamWrapper {

  val availableCalls = new AtomicLong()
  val largestRequested = new AtomicLong()
  val largestReturned = new AtomicLong()
  val reads = new AtomicLong()

  def reset(): Unit =
    Seq(availableCalls, largestRequested, largestReturned, reads).foreach(_.set(0))

  override def wrap(in: InputStream): InputStream = new CountingStream(in)

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
