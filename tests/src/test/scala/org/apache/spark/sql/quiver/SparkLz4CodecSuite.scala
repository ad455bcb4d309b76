package org.apache.spark.sql.quiver

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, InputStream}
import java.util.Random

import dev.quiver.codec.{Lz4FramingException, SparkStreamCodec}
import org.apache.spark.SparkConf
import org.apache.spark.io.{CompressionCodec, LZ4CompressionCodec}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Quiver's reader of Spark's lz4 framing reads what Spark's own `LZ4CompressionCodec` writes, at
 * every `spark.io.compression.lz4.blockSize`, and [[SparkCodec]] reads Spark's lz4 with it.
 */
class SparkLz4CodecSuite extends AnyFunSuite {

  private val BlockSizes = Seq("32k", "64k", "1m", "4m")

  private def conf(blockSize: String): SparkConf =
    new SparkConf(false)
      .set("spark.io.compression.codec", "lz4")
      .set("spark.io.compression.lz4.blockSize", blockSize)

  /** `data` through Spark's own lz4 codec's output stream. */
  private def sparkCompress(blockSize: String, data: Array[Byte]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new LZ4CompressionCodec(conf(blockSize)).compressedOutputStream(bytes)
    try out.write(data)
    finally out.close()
    bytes.toByteArray
  }

  private def readAll(in: InputStream, readSize: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val buffer = new Array[Byte](readSize)
    try {
      var n = in.read(buffer, 0, readSize)
      while (n >= 0) {
        out.write(buffer, 0, n)
        n = in.read(buffer, 0, readSize)
      }
    } finally in.close()
    out.toByteArray
  }

  private def quiverRead(stream: Array[Byte], readSize: Int = 64 * 1024): Array[Byte] =
    readAll(SparkStreamCodec.LZ4.decompress(new ByteArrayInputStream(stream)), readSize)

  /** Half noise (raw blocks), half repetitive text (lz4 blocks), in runs of `run` bytes. */
  private def data(length: Int, run: Int, seed: Long): Array[Byte] = {
    val random = new Random(seed)
    Array.tabulate(length) { i =>
      if ((i / run) % 2 == 0) random.nextInt(256).toByte else ('a' + (i / 11) % 5).toByte
    }
  }

  BlockSizes.foreach { blockSize =>
    test(s"reads Spark's lz4 at blockSize $blockSize to the same bytes") {
      assert(CompressionCodec.createCodec(conf(blockSize)).isInstanceOf[LZ4CompressionCodec])
      val size = conf(blockSize).getSizeAsBytes("spark.io.compression.lz4.blockSize").toInt
      val original = data(2 * size + 12345, size / 3, size)
      val stream = sparkCompress(blockSize, original)
      Seq(1, 1000, size, 4 * size).foreach { readSize =>
        assert(quiverRead(stream, readSize).sameElements(original), s"reads of $readSize")
      }
    }
  }

  test("reads concatenated and empty Spark lz4 streams as one") {
    val parts = BlockSizes.zipWithIndex.map { case (blockSize, i) =>
      blockSize -> data(100000 * (i + 1), 30000, i)
    }
    val streams = parts.flatMap { case (blockSize, bytes) =>
      Seq(sparkCompress(blockSize, bytes), sparkCompress(blockSize, Array.emptyByteArray))
    }
    val expected = parts.flatMap(_._2).toArray
    assert(quiverRead(streams.flatten.toArray).sameElements(expected))
    assert(quiverRead(sparkCompress("32k", Array.emptyByteArray)).isEmpty)
    assert(quiverRead(Array.emptyByteArray).isEmpty)
  }

  test("a Spark lz4 stream cut short is reported, not read short") {
    val stream = sparkCompress("32k", data(100000, 10000, 1))
    val e = intercept[Lz4FramingException](quiverRead(stream.take(stream.length - 5)))
    assert(e.getMessage.contains("truncated"), e.getMessage)
  }

  test("SparkCodec reads Spark's lz4 with Quiver's reader and other codecs with Spark's") {
    val lz4 = SparkCodec(conf("64k"))
    val original = data(300000, 20000, 7)
    val written = new ByteArrayOutputStream()
    val out = lz4.compress(written)
    try out.write(original)
    finally out.close()
    val in = lz4.decompress(new ByteArrayInputStream(written.toByteArray))
    assert(in.getClass.getName == "dev.quiver.codec.SparkLz4InputStream")
    assert(readAll(in, 4096).sameElements(original))

    val byClassName = SparkCodec(conf("32k"), classOf[LZ4CompressionCodec].getName)
    val fromName = byClassName.decompress(new ByteArrayInputStream(written.toByteArray))
    assert(fromName.getClass.getName == "dev.quiver.codec.SparkLz4InputStream")
    fromName.close()

    val zstd = SparkCodec(new SparkConf(false), "zstd")
    val zstdIn = zstd.decompress(new ByteArrayInputStream(Array.emptyByteArray))
    assert(zstdIn.getClass.getName != "dev.quiver.codec.SparkLz4InputStream")
  }
}
