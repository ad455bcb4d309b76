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
  private def readWithSecondBlockFlipped(decoding: Boolean, at: Int, mask: Int): (String, Int) =
    readWithBlockChanged(decoding, block = 1) { (blocks, second) =>
      val changed = blocks.clone()
      changed(second + at) = (changed(second + at) ^ mask).toByte
      changed
    }

  /**
   * [[readAfter]] with the blocks changed by `change`, given them and the offset of block `block`
   * in the stream. Returns why the task failed and that offset.
   */
  private def readWithBlockChanged(decoding: Boolean, block: Int)(
      change: (Array[Byte], Int) => Array[Byte]
  ): (String, Int) = {
    var start = 0
    val message = readAfter(decoding) { blocks =>
      start = blockStarts(blocks)(block)
      change(blocks, start)
    }
    (message, start)
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
    val (message, third) = readWithBlockChanged(decoding = true, block = 2) { (blocks, start) =>
      val changed = blocks.clone()
      // The body's first bytes: the IPC schema message's length prefix.
      (start + 20 until start + 28).foreach(i => changed(i) = 0x7f.toByte)
      changed
    }
    assert(message.contains(s"Corrupt shuffle block 2 at stream offset $third"), message)
    assert(message.contains("does not decode"), message)
  }

  test("a stream cut inside a block fails with the end-of-stream error naming the block") {
    val (message, second) =
      readWithBlockChanged(decoding = true, block = 1)((blocks, start) => blocks.take(start + 100))
    assert(message.contains("EOFException"), message)
    assert(
      message.contains(s"ended inside block 1 (which starts at stream offset $second)"),
      message
    )
  }
}
