package org.apache.spark.sql.quiver

import java.io.{InputStream, OutputStream}

import dev.quiver.ipc.StreamCodec
import org.apache.spark.SparkConf
import org.apache.spark.io.CompressionCodec

/**
 * Spark's configured block codec (`spark.io.compression.codec`) as Quiver's [[StreamCodec]]: the
 * codec Spark itself uses for broadcasts, so an engine's broadcast bytes decode unchanged.
 */
class SparkCodec(codec: CompressionCodec) extends StreamCodec {

  override def decompress(in: InputStream): InputStream = codec.compressedInputStream(in)

  override def compress(out: OutputStream): OutputStream = codec.compressedOutputStream(out)

  override def toString: String = codec.getClass.getSimpleName
}

object SparkCodec {

  def apply(conf: SparkConf): SparkCodec = new SparkCodec(CompressionCodec.createCodec(conf))

  def apply(conf: SparkConf, name: String): SparkCodec =
    new SparkCodec(CompressionCodec.createCodec(conf, name))
}
