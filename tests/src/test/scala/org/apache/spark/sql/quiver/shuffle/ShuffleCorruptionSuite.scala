package org.apache.spark.sql.quiver.shuffle

import org.apache.spark.SparkException
import org.scalatest.funsuite.AnyFunSuite

/**
 * Corrupt and truncated shuffle data: a map stage writes, the test changes the blocks of one map
 * output in the written shuffle file, then the reduce runs. Spark's shuffle compression (on in the
 * test session) would catch raw byte flips itself and treat them as a fetch failure, so the test
 * changes the bytes under Spark's codec: what Quiver's reader then gets is exactly the change.
 */
class ShuffleCorruptionSuite extends AnyFunSuite with ShuffleTestSupport {

  /** Changes the first map output's blocks, reads the shuffle, and returns why the task failed. */
  private def readAfter(decoding: Boolean)(change: Array[Byte] => Array[Byte]): String = {
    val exchange = writtenShuffle()
    val files = ShuffleFiles.of(exchange.dependency.shuffleId)
    assert(files.size == 2)
    files.head.rewriteSegment(0)(change)
    val failure = intercept[SparkException] {
      if (decoding) exchange.batches.map(_.numRows()).collect()
      else exchange.rawBlocks.map(_.body.remaining()).collect()
    }
    val shuffle = exchange.dependency.shuffleId
    assert(failure.getMessage.contains(s"shuffle $shuffle reduce partition 0, map output stream"))
    failure.getMessage
  }

  /**
   * [[readAfter]] with one byte of the second block flipped: the byte `at` bytes into the block,
   * xor `mask`. Returns why the task failed and the offset of the block in its stream.
   */
  private def readWithSecondBlockFlipped(decoding: Boolean, at: Int, mask: Int): (String, Int) = {
    var second = 0
    val message = readAfter(decoding) { blocks =>
      second = blockStarts(blocks)(1)
      val changed = blocks.clone()
      changed(second + at) = (changed(second + at) ^ mask).toByte
      changed
    }
    (message, second)
  }

  test("a flipped codec tag fails the task with the corruption error naming the block") {
    // "NONE" -> "nONE"
    val (message, second) = readWithSecondBlockFlipped(decoding = true, at = 16, mask = 0x20)
    assert(message.contains("ShuffleCorruptionException"), message)
    assert(message.contains(s"Corrupt shuffle block 1 at stream offset $second"), message)
    assert(message.contains("is not a known codec"), message)
  }

  test("a flipped length fails the raw-block path before anything is allocated for it") {
    // The top bit: a negative length.
    val (message, second) = readWithSecondBlockFlipped(decoding = false, at = 7, mask = 0x80)
    assert(message.contains("ShuffleCorruptionException"), message)
    assert(message.contains(s"Corrupt shuffle block 1 at stream offset $second"), message)
    assert(message.contains("is negative"), message)
  }

  test("a corrupt body fails the decoding path naming the block") {
    var third = 0
    val message = readAfter(decoding = true) { blocks =>
      third = blockStarts(blocks)(2)
      val changed = blocks.clone()
      // The body's first bytes: the IPC schema message's length prefix.
      (third + 20 until third + 28).foreach(i => changed(i) = 0x7f.toByte)
      changed
    }
    assert(message.contains(s"Corrupt shuffle block 2 at stream offset $third"), message)
    assert(message.contains("does not decode"), message)
  }

  test("a stream cut inside a block fails with the end-of-stream error naming the block") {
    var second = 0
    val message = readAfter(decoding = true) { blocks =>
      second = blockStarts(blocks)(1)
      blocks.take(second + 100)
    }
    assert(message.contains("EOFException"), message)
    assert(
      message.contains(s"ended inside block 1 (which starts at stream offset $second)"),
      message
    )
  }
}
