package org.apache.spark.sql.quiver

import java.io.InputStream
import java.nio.ByteBuffer
import java.util.concurrent.{CountDownLatch, TimeUnit}

import dev.quiver.broadcast.BroadcastReader
import dev.quiver.io.ArrayInputStream
import dev.quiver.spark.broadcast.{ArrowBroadcast, BroadcastStreams, QuiverBroadcasts}
import org.apache.spark.sql.Row
import org.apache.spark.util.io.ChunkedByteBuffer
import org.scalatest.funsuite.AnyFunSuite

/**
 * The engine API (`QuiverBroadcasts`, `BroadcastStreams`) on a real local SparkSession: an engine's
 * broadcast value, of the shapes engines broadcast, read through the executor's cache in place.
 */
class EngineApiSuite extends AnyFunSuite with QuiverSparkSession {

  private def readAll(in: InputStream): Array[Byte] =
    try in.readAllBytes()
    finally in.close()

  /** `bytes` as a chunked buffer of `chunks` heap chunks over the same array: no copy. */
  private def chunked(bytes: Array[Byte], chunks: Int): ChunkedByteBuffer = {
    val step = math.max(1, (bytes.length + chunks - 1) / chunks)
    val parts = (0 until bytes.length by step).map { offset =>
      ByteBuffer.wrap(bytes, offset, math.min(step, bytes.length - offset)).slice()
    }
    new ChunkedByteBuffer(parts.toArray)
  }

  test("every adapter sees the same streams, and heap values are read in place") {
    val streams = Array(Array.tabulate[Byte](1000)(i => (i * 7).toByte), Array[Byte](1, 2, 3))
    val direct = streams.map { s =>
      val buffer = ByteBuffer.allocateDirect(s.length)
      buffer.put(s).flip()
      buffer
    }
    val heap = streams.map(ByteBuffer.wrap)
    val oneChunk = streams.map(chunked(_, 1))
    val threeChunks = streams.map(chunked(_, 3))
    streams.indices.foreach { i =>
      val expected = streams(i).toSeq
      assert(readAll(BroadcastStreams.byteArrays.openStream(streams, i)).toSeq == expected)
      assert(readAll(BroadcastStreams.byteBuffers.openStream(heap, i)).toSeq == expected)
      assert(readAll(BroadcastStreams.byteBuffers.openStream(direct, i)).toSeq == expected)
      assert(readAll(BroadcastStreams.chunkedByteBuffers.openStream(oneChunk, i)).toSeq == expected)
      assert(
        readAll(BroadcastStreams.chunkedByteBuffers.openStream(threeChunks, i)).toSeq == expected
      )
      assert(BroadcastStreams.chunkedByteBuffers.streamLength(threeChunks, i) == expected.size)
      assert(BroadcastStreams.byteBuffers.streamLength(direct, i) == expected.size)
      assert(direct(i).position() == 0, "reading moved the value's own buffer")
    }
    assert(BroadcastStreams.chunkedByteBuffers.streamCount(threeChunks) == 2)
    // In place: the stream reads the value's own array, not a copy of it.
    BroadcastStreams.chunkedByteBuffers.openStream(oneChunk, 0) match {
      case in: ArrayInputStream => assert(in.array() eq streams(0))
      case other => fail(s"a heap chunk is read through $other, not in place")
    }
    BroadcastStreams.byteBuffers.openStream(heap, 0) match {
      case in: ArrayInputStream => assert(in.array() eq streams(0))
      case other => fail(s"a heap buffer is read through $other, not in place")
    }
  }

  test("tasks read an engine's chunked broadcast through the executor's cache, decoded once") {
    val tasks = 4
    val df = spark.range(0, 5000, 1, 2).selectExpr("id AS k", "concat('v', id) AS v")
    val arrow = ArrowBroadcast.of(df)
    // Comet's shape: one ChunkedByteBuffer per stream, several chunks each.
    val value = spark.sparkContext.broadcast(arrow.value.value.map(chunked(_, 3)))
    val decodesBefore = QuiverRuntime.broadcastCache.counters().decodes()
    EngineApiSuite.arrived = new CountDownLatch(tasks)
    val perTask = spark.sparkContext
      .parallelize(0 until tasks, tasks)
      .mapPartitions { _ =>
        val reader: BroadcastReader =
          QuiverBroadcasts.open(value, BroadcastStreams.chunkedByteBuffers, share = true)
        val rows = QuiverBroadcasts
          .columnarBatches(reader)
          .flatMap(batch => SparkRows.fromBatch(batch, arrow.schema))
          .toVector
        // Every task holds the entry until all have read it: one decode for all.
        EngineApiSuite.arrived.countDown()
        EngineApiSuite.arrived.await(60, TimeUnit.SECONDS)
        Iterator(rows)
      }
      .collect()
      .toSeq

    val expected = df.collect().toSeq.sortBy(_.getLong(0))
    perTask.foreach(rows => assert(rows.sortBy((r: Row) => r.getLong(0)) == expected))
    assert(QuiverRuntime.broadcastCache.counters().decodes() - decodesBefore == 1)
    val snapshot = QuiverRuntime.broadcastCache.snapshot()
    assert(snapshot.isEmpty, s"cache still holds $snapshot")
    value.destroy()
    arrow.value.destroy()
  }
}

object EngineApiSuite {
  @volatile var arrived: CountDownLatch = _
}
