package org.apache.spark.sql.quiver

import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.logging.log4j.Level
import org.apache.spark.SparkException
import org.apache.spark.sql.quiver.shuffle.{ShuffleFiles, ShuffleTestSupport}
import org.scalatest.funsuite.AnyFunSuite

/**
 * What Quiver logs in a Spark application, as Spark's log4j2 receives it: a broadcast decode on
 * the executor, and the refusal of a corrupt shuffle block where the reduce task's read ends.
 */
class LoggingSuite extends AnyFunSuite with ShuffleTestSupport {

  test("a shared broadcast decode is one INFO line naming the broadcast") {
    val broadcast = ArrowBroadcast.of(spark.range(0, 1000, 1, 2).selectExpr("id AS k"))
    val id = broadcast.value.id
    try {
      val lines = CapturedLog.during("dev.quiver.broadcast", Level.INFO) {
        assert(broadcast.rdd(1).map(_.numRows()).collect().sum == 1000)
      }
      val decodes = lines.filter(_.message.startsWith(s"Decoded broadcast $id "))
      assert(decodes.size == 1, lines)
      assert(decodes.head.level == Level.INFO)
      assert(decodes.head.logger == "dev.quiver.broadcast.DecodedBroadcastCache")
      assert(
        decodes.head.message.matches(
          s"Decoded broadcast $id in \\d+ ms for this executor's tasks to share: 1 stream, " +
            s"${broadcast.bytes} compressed bytes, \\d+ decoded bytes \\(task \\d+\\)"
        ),
        decodes.head.message
      )
    } finally broadcast.value.destroy()
  }

  test("a corrupt shuffle block is one WARN line naming the block and its map output") {
    val exchange = writtenShuffle()
    val shuffle = exchange.dependency.shuffleId
    val files = ShuffleFiles.of(shuffle)
    var second = 0
    files.head.rewriteSegment(0) { blocks =>
      second = blockStarts(blocks)(1)
      val changed = blocks.clone()
      changed(second + 16) = (changed(second + 16) ^ 0x20).toByte // "NONE" -> "nONE"
      changed
    }
    val lines = CapturedLog.during("dev.quiver", Level.WARN) {
      intercept[SparkException](exchange.batches.map(_.numRows()).collect())
    }
    assert(lines.size == 1, lines)
    val refusal = lines.head
    assert(refusal.level == Level.WARN)
    assert(refusal.logger == "dev.quiver.spark.shuffle")
    assert(
      refusal.message.startsWith(
        s"Refused shuffle input: Corrupt shuffle block 1 at stream offset $second " +
          s"(shuffle $shuffle reduce partition 0, map output stream "
      ),
      refusal.message
    )
    assert(refusal.message.contains("is not a known codec"), refusal.message)
    assert(refusal.thrown == null, "the failed task carries the stack trace to Spark's log")
  }

  test("a shuffle stream cut inside a block is refused once, naming the block") {
    val exchange = writtenShuffle()
    val files = ShuffleFiles.of(exchange.dependency.shuffleId)
    var second = 0
    files.head.rewriteSegment(0) { blocks =>
      second = blockStarts(blocks)(1)
      blocks.take(second + 100)
    }
    val lines = CapturedLog.during("dev.quiver", Level.WARN) {
      intercept[SparkException](exchange.rawBlocks.map(_.body.remaining()).collect())
    }
    assert(lines.size == 1, lines)
    assert(lines.head.message.startsWith("Refused shuffle input: Shuffle stream ("), lines.head)
    assert(
      lines.head.message.contains(s"ended inside block 1 (which starts at stream offset $second)"),
      lines.head
    )
  }
}
