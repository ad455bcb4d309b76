package org.apache.spark.sql.quiver

import java.io.{InputStream, OutputStream}

import dev.quiver.ipc.{SparkStreamCodec, StreamCodec}
import org.apache.spark.SparkConf
import org.apache.spark.io.{CompressionCodec, LZ4CompressionCodec}

/**
 * Spark's configured block codec (`spark.io.compression.codec`) as Quiver's [[StreamCodec]]: the
 * codec Spark itself uses for broadcasts, so an engine's broadcast bytes decode unchanged.
 *
 * Spark's lz4 codec is read with Quiver's own reader of its framing rather than with Spark's,
 * whose lz4-java fast decompressor can crash the JVM on hostile bytes (CVE-2025-12183); it still
 * writes with Spark's. Every other codec reads and writes with Spark's.
 */
class SparkCodec(codec: CompressionCodec) extends StreamCodec {

  // Exactly Spark's class: a subclass may frame its bytes otherwise.
  private val readsSparkLz4 = codec.getClass == classOf[LZ4CompressionCodec]

  override def decompress(in: InputStream): InputStream =
    if (readsSparkLz4) SparkStreamCodec.LZ4.decompress(in) else codec.compressedInputStream(in)

  override def compress(out: OutputStream): OutputStream = codec.compressedOutputStream(out)

  override def toString: String = codec.getClass.getSimpleName
}

object SparkCodec {

  def apply(conf: SparkConf): SparkCodec = new SparkCodec(CompressionCodec.createCodec(conf))

  def apply(conf: SparkConf, name: String): SparkCodec =
    new SparkCodec(CompressionCodec.createCodec(conf, name))
}
