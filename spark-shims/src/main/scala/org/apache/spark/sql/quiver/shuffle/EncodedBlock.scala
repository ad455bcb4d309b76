package org.apache.spark.sql.quiver.shuffle

import java.io.{ByteArrayOutputStream, OutputStream}

/**
 * One shuffle block as the map side encoded it (length field, header and body): the value of
 * the records the exchange hands Spark's shuffle writer, which passes it to
 * [[ShuffleBlockSerializer]]. Self-contained bytes, so any shuffle writer may buffer it.
 */
final private[quiver] class EncodedBlock(bytes: ByteArrayOutputStream) {

  /** The block's bytes, length field included. */
  def length: Int = bytes.size()

  /** Writes the block without copying it first. */
  def writeTo(out: OutputStream): Unit = bytes.writeTo(out)
}
