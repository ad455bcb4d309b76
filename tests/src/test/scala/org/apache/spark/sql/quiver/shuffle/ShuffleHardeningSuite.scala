package org.apache.spark.sql.quiver.shuffle

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, EOFException, IOException}
import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import dev.quiver.codec.SparkStreamCodec
import dev.quiver.shuffle.{BlockCodec, ShuffleBlockDecoder, ShuffleBlockWriter}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{IntVector, VectorSchemaRoot}
import org.apache.spark.{FetchFailed, SparkConf, SparkEnv, SparkException}
import org.apache.spark.io.CompressionCodec
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.shuffle.sort.SortShuffleManager
import org.apache.spark.sql.quiver.{QuiverSparkSession, SparkCodec}
import org.apache.spark.sql.quiver.bench.ListenerBus
import org.apache.spark.storage.ShuffleBlockId
import org.scalatest.funsuite.AnyFunSuite

/**
 * Hardening of the reduce side on a real local session: a local segment is consumed to the exact
 * length its index file gives, the raw path checks each block's field count against the
 * exchange's schema, and Spark's lz4 and snappy shuffle streams are decompressed by Quiver's
 * readers.
 */
class ShuffleHardeningSuite extends AnyFunSuite with ShuffleTestSupport {

  /** Runs `job`, returning what it gave and the messages of the fetch failures on the way. */
  private def withFetchFailures[T](job: => T): (Either[SparkException, T], Seq[String]) = {
    val failures = ArrayBuffer.empty[String]
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = end.reason match {
        case failed: FetchFailed => failures.synchronized(failures += failed.message)
        case _ =>
      }
    }
    val sc = spark.sparkContext
    sc.addSparkListener(listener)
    try {
      val result =
        try Right(job)
        catch { case e: SparkException => Left(e) }
      ListenerBus.drain(sc)
      (result, failures.synchronized(failures.toList))
    } finally {
      sc.removeSparkListener(listener)
      if (failures.synchronized(failures.nonEmpty)) QuiverSparkSession.discard()
    }
  }

  test("a data file cut at a block boundary, its index unchanged, fails the fetch by name") {
    val exchange = writtenShuffle()
    val shuffle = exchange.dependency.shuffleId
    val files = ShuffleFiles.of(shuffle)
    assert(files.size == 2)
    val damaged = files.head
    val indexLength = damaged.offsets(1)
    // Two whole blocks, compressed again as Spark does: a valid, shorter lz4 stream.
    damaged.rewriteSegment(0, updateIndex = false)(blocks => blocks.take(blockStarts(blocks)(2)))
    val cut = damaged.data.length.toLong
    assert(cut < indexLength)

    val (result, failures) = withFetchFailures(exchange.batches.map(_.numRows()).collect())
    // Refused when the segment is opened, before Spark's stream would end short.
    val expected =
      s"shuffle_${shuffle}_${damaged.mapId}_0.index says partition 0 ends at file offset " +
        s"$indexLength, but the data file has $cut bytes (truncated)"
    assert(failures.exists(_.contains(expected)), failures.mkString("\n---\n"))
    // Spark treats a short segment as it treats a corrupt stream: a fetch failure, after which it
    // writes the map output again. So the job ends with every row.
    assert(result.map(_.sum) == Right(600), result)
  }

  test("the raw path refuses a block whose field count is not the exchange schema's") {
    val exchange = writtenShuffle()
    val fields = exchange.schema.length
    val files = ShuffleFiles.of(exchange.dependency.shuffleId)
    files.head.rewriteSegment(0) { blocks =>
      // Every block declares one field fewer: they agree with each other, not with the schema.
      val changed = blocks.clone()
      blockStarts(blocks).foreach { start =>
        ByteBuffer.wrap(changed, start + 8, 8).order(ByteOrder.LITTLE_ENDIAN).putLong(fields - 1L)
      }
      changed
    }
    val failure = intercept[SparkException] {
      exchange.rawBlocks.map(_.body.remaining()).collect()
    }
    val message = failure.getMessage
    assert(message.contains("ShuffleCorruptionException"), message)
    assert(
      message.contains(
        s"Corrupt shuffle block 0 at stream offset 0 (shuffle ${exchange.dependency.shuffleId} " +
          "reduce partition 0, map output stream"
      ),
      message
    )
    assert(
      message.contains(
        s"the header declares ${fields - 1} fields, expected $fields (the schema the reader expects)"
      ),
      message
    )
  }

  test("Quiver reads Spark's lz4 and snappy shuffle codecs with its own readers") {
    def codec(name: String) = CompressionCodec.createCodec(new SparkConf(false), name)
    assert(SparkCodec.quiverReaderFor(codec("lz4")).contains(SparkStreamCodec.LZ4))
    assert(
      SparkCodec.quiverReaderFor(codec("snappy")).contains(SparkStreamCodec.SNAPPY)
    )
    assert(SparkCodec.quiverReaderFor(codec("zstd")).isEmpty)
  }

  test("a damaged Spark-lz4 shuffle stream fails in Quiver's reader, with nothing leaked") {
    val manager = serializerManager("lz4")
    val blocks = sparkCompressed("lz4")
    // The first LZ4Block header (magic 8, token 1, compressed length 4, then the decompressed
    // length): a length past any block size is refused before anything is decompressed.
    val damaged = blocks.clone()
    ByteBuffer.wrap(damaged, 13, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(Int.MaxValue)
    val stream = manager.wrapStream(ShuffleBlockId(0, 0, 0), new ByteArrayInputStream(damaged))
    assert(
      stream.getClass == SparkStreamCodec.LZ4.decompress(new ByteArrayInputStream(blocks)).getClass
    )
    val allocator = new RootAllocator()
    try {
      val decoder = new ShuffleBlockDecoder(stream, allocator)
      try intercept[IOException](decoder.next())
      finally decoder.close()
      assert(allocator.getAllocatedMemory == 0)
    } finally allocator.close()

    // The undamaged stream reads through the same path.
    val good = manager.wrapStream(ShuffleBlockId(0, 0, 0), new ByteArrayInputStream(blocks))
    assert(decodedRows(good) == 3)
  }

  test("a hostile snappy chunk length in a shuffle stream fails in Quiver's snappy reader") {
    val manager = serializerManager("snappy")
    val blocks = sparkCompressed("snappy")
    assert(
      decodedRows(
        manager.wrapStream(ShuffleBlockId(0, 0, 0), new ByteArrayInputStream(blocks))
      ) == 3
    )
    // The first chunk length, right after the 16-byte header: 512 MiB - 1 on a short stream.
    val damaged = blocks.clone()
    ByteBuffer.wrap(damaged, 16, 4).putInt((512 << 20) - 1)
    val stream = manager.wrapStream(ShuffleBlockId(0, 0, 0), new ByteArrayInputStream(damaged))
    val e = intercept[EOFException](decodedRows(stream))
    assert(e.getMessage.startsWith("The snappy-java stream ended inside chunk 1"), e.getMessage)
  }

  private def serializerManager(codec: String): QuiverSerializerManager = {
    val conf = new SparkConf(false)
      .set("spark.shuffle.compress", "true")
      .set("spark.io.compression.codec", codec)
    val resolver = SparkEnv.get.shuffleManager.asInstanceOf[SortShuffleManager].shuffleBlockResolver
    new QuiverSerializerManager(
      SparkEnv.get.serializerManager,
      conf,
      new SegmentLengths(Nil, SparkEnv.get.blockManager.blockManagerId, resolver, partitions = 1)
    )
  }

  /** One block of three rows, compressed by Spark's `codec` as Spark's shuffle writer does. */
  private def sparkCompressed(codec: String): Array[Byte] = {
    val allocator = new RootAllocator()
    try {
      val vector = new IntVector("i", allocator)
      val root = VectorSchemaRoot.of(vector)
      try {
        vector.allocateNew(3)
        (0 until 3).foreach(i => vector.set(i, i))
        root.setRowCount(3)
        val out = new ByteArrayOutputStream()
        val compressed =
          CompressionCodec.createCodec(new SparkConf(false), codec).compressedOutputStream(out)
        new ShuffleBlockWriter(compressed, BlockCodec.NONE).write(root)
        compressed.close()
        out.toByteArray
      } finally root.close()
    } finally allocator.close()
  }

  private def decodedRows(in: java.io.InputStream): Int = {
    val allocator = new RootAllocator()
    try {
      val decoder = new ShuffleBlockDecoder(in, allocator)
      try {
        var rows = 0
        while (decoder.next()) rows += decoder.root().getRowCount
        rows
      } finally decoder.close()
    } finally {
      assert(allocator.getAllocatedMemory == 0)
      allocator.close()
    }
  }
}
