package org.apache.spark.sql.quiver

import java.io.{InputStream, OutputStream}

import dev.quiver.codec.{SparkStreamCodec, StreamCodec}
import org.apache.spark.SparkConf
import org.apache.spark.io.{CompressionCodec, LZ4CompressionCodec, SnappyCompressionCodec}

/**
 * Spark's configured block codec (`spark.io.compression.codec`) as Quiver's [[StreamCodec]]: the
 * codec Spark itself uses for broadcasts, so an engine's broadcast bytes decode unchanged.
 *
 * Spark's lz4 and snappy codecs are read with Quiver's own readers of their framing rather than
 * with Spark's: lz4-java's fast decompressor can crash the JVM on hostile bytes (CVE-2025-12183),
 * and snappy-java's stream allocates whatever chunk length the bytes claim. Writing stays on
 * Spark's codec. zstd, and any other codec, reads and writes with Spark's (zstd-jni's decoder
 * bounds its reads; see `BlockCodec`).
 */
private[quiver] class SparkCodec(codec: CompressionCodec) extends StreamCodec {

  private val quiverReader: Option[SparkStreamCodec] = SparkCodec.quiverReaderFor(codec)

  override def decompress(in: InputStream): InputStream = quiverReader match {
    case Some(reader) => reader.decompress(in)
    case None => codec.compressedInputStream(in)
  }

  override def compress(out: OutputStream): OutputStream = codec.compressedOutputStream(out)

  override def toString: String = codec.getClass.getSimpleName
}

private[quiver] object SparkCodec {

  /**
   * Quiver's reader of Spark `codec`'s streams, if Quiver has one: lz4 and snappy. The exact class
   * is matched: a subclass may frame its bytes otherwise.
   */
  def quiverReaderFor(codec: CompressionCodec): Option[SparkStreamCodec] =
    if (codec.getClass == classOf[LZ4CompressionCodec]) Some(SparkStreamCodec.LZ4)
    else if (codec.getClass == classOf[SnappyCompressionCodec]) Some(SparkStreamCodec.SNAPPY)
    else None

  def apply(conf: SparkConf): SparkCodec = new SparkCodec(CompressionCodec.createCodec(conf))

  def apply(conf: SparkConf, name: String): SparkCodec =
    new SparkCodec(CompressionCodec.createCodec(conf, name))
}
