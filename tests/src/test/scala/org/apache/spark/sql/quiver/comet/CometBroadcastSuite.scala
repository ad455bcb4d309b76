package org.apache.spark.sql.quiver.comet

import java.nio.file.Files
import java.sql.Timestamp

import org.apache.spark.sql.quiver.QuiverRuntime
import dev.quiver.spark.broadcast.ArrowBroadcastRDD
import dev.quiver.testing.CometFiles
import org.apache.spark.sql.quiver.{QuiverSparkSession, SparkRows}
import org.scalatest.funsuite.AnyFunSuite

/** The broadcast value Comet shipped for a join, read through Quiver's broadcast read path. */
class CometBroadcastSuite extends AnyFunSuite with QuiverSparkSession {

  private lazy val expectedRows = SparkRows.sorted(CometTestData.dimRows(spark))

  private def readAll(share: Boolean): Seq[Seq[Any]] = {
    val bytes = Files.readAllBytes(CometFiles.broadcast())
    val broadcast = spark.sparkContext.broadcast(Array(bytes))
    val schema = CometTestData.dimSchema
    try
      new ArrowBroadcastRDD(spark.sparkContext, broadcast, 2, share)
        .mapPartitions(_.flatMap(batch => SparkRows.fromBatch(batch, schema)))
        .collect()
        .toSeq
        .map(row => row.toSeq)
    finally broadcast.destroy()
  }

  /**
   * Spark's JSON writer keeps timestamps to the millisecond; Comet's values carry microseconds.
   * Compare at the precision the expected rows have.
   */
  private def toJsonPrecision(value: Any): Any = value match {
    case ts: Timestamp =>
      val millis = new Timestamp(ts.getTime)
      millis.setNanos(ts.getNanos / 1000000 * 1000000)
      millis
    case other => other
  }

  for (share <- Seq(true, false))
    test(
      s"broadcast-0.bin gives exactly dim's rows, two tasks, sharing ${if (share) "on" else "off"}"
    ) {
      val expected = expectedRows
      assert(expected.size == CometFiles.DIM_ROWS)
      val rows = readAll(share)
      assert(
        rows.size == 2 * CometFiles.DIM_ROWS,
        "each of the two tasks reads the whole broadcast"
      )
      val actual =
        rows.map(row => SparkRows.normalize(row.map(toJsonPrecision))).sortBy(_.toString)
      val (first, second) = actual.zipWithIndex.partition(_._2 % 2 == 0)
      assert(first.map(_._1) == expected)
      assert(second.map(_._1) == expected)
      assert(QuiverRuntime.broadcastCache.snapshot().isEmpty)
      assert(QuiverRuntime.allocator.getAllocatedMemory == 0)
    }
}
