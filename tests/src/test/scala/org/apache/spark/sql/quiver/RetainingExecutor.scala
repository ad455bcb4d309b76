package org.apache.spark.sql.quiver

import dev.quiver.spark.QuiverMetrics
import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD, BroadcastReadMetrics}
import dev.quiver.spark.join.QuiverJoins
import org.apache.spark.sql.SparkSession
import org.apache.spark.util.LongAccumulator

/**
 * A Spark started with Quiver's plugin and retention on (executor-wide settings, so a JVM of its
 * own), `local[1]` so that no two tasks ever overlap: what it saw, as [[ChildJvm]] results. Run
 * once per test JVM and shared by the suites that check it.
 */
object RetainingExecutor {

  /** The child's results: the keys it was given that Spark knew at start, then the scenario's. */
  lazy val results: Map[String, String] =
    ChildJvm.results(getClass, QuiverConf.entries.map(_.key): _*)

  def main(args: Array[String]): Unit = {
    val spark = ChildJvm.retainingSpark("local[1]", "quiver-retaining-executor")
    try {
      // Before anything touches Quiver: which settings did the plugin register?
      args.filter(org.apache.spark.sql.internal.SQLConf.containsConfigKey).foreach { key =>
        ChildJvm.report("registered." + key, true)
      }
      scenario(spark)
    } finally spark.stop()
  }

  private def scenario(spark: SparkSession): Unit = {
    val counters = QuiverMetrics.broadcastCache
    val dim = ArrowBroadcast.of(spark.range(0, 2000, 1, 2).selectExpr("id", "concat('v', id) AS s"))
    def rowsRead(broadcast: ArrowBroadcast): Long = rowsOf(broadcast.rdd(8))
    def rowsOf(rdd: ArrowBroadcastRDD): Long = rdd.map(_.numRows().toLong).collect().sum
    // Two jobs of eight tasks each, one task at a time: sixteen reads of one broadcast.
    val jobs = Seq(dim.rdd(8), dim.rdd(8))
    ChildJvm.report("rows", jobs.map(rowsOf).sum)
    // How the tasks' reads were served, as the RDDs' accumulators have it.
    def served(figure: BroadcastReadMetrics => LongAccumulator): Long =
      jobs.map(rdd => figure(rdd.readMetrics).value.longValue).sum
    ChildJvm.report("readsDecoded", served(_.decoded))
    ChildJvm.report("readsRetained", served(_.retained))
    ChildJvm.report("readsSharedOrPrivate", served(_.shared) + served(_.decodedPrivately))
    ChildJvm.report("decodes", counters.decodes())
    ChildJvm.report("retainedReads", counters.retainedReads())
    ChildJvm.report("entriesRetained", counters.entriesRetained())
    ChildJvm.report("bytesRetained", counters.bytesRetained())
    ChildJvm.report("storageTaken", ChildJvm.quiverStorage)
    ChildJvm.report("metricDecodes", ChildJvm.pluginGauge("broadcast.decodes"))

    // Two joins against the retained broadcast: its build side is built once, then reused by
    // the driver's and the eight tasks' reads of both queries, and retained beside the batches.
    val (builds, reuses) = (counters.derivedBuilds(), counters.derivedReuses())
    val probe = spark.range(0, 4000, 1, 8).selectExpr("id % 2500 AS k")
    def joinRows(): Long =
      QuiverJoins.broadcastHashJoin(probe, dim, Seq("k"), Seq("id"), "inner").count()
    ChildJvm.report("joinRows", joinRows() + joinRows())
    ChildJvm.report("joinDecodes", counters.decodes())
    ChildJvm.report("joinBuilds", counters.derivedBuilds() - builds)
    ChildJvm.report("joinReuses", counters.derivedReuses() - reuses)
    ChildJvm.report("bytesRetainedWithBuild", counters.bytesRetained())
    ChildJvm.report("storageTakenWithBuild", ChildJvm.quiverStorage)

    // Destroy the broadcast: the entry goes at the next task boundary, with its storage memory.
    val id = dim.value.id
    dim.value.destroy(true) // blocking: the block is gone when it returns
    val other = ArrowBroadcast.of(spark.range(0, 10).toDF("id"))
    ChildJvm.report("otherRows", rowsRead(other))
    val entries = QuiverMetrics.broadcastCacheEntries.entries()
    var destroyedKept = false
    entries.forEach(e => if (e.broadcastId() == id) destroyedKept = true)
    ChildJvm.report("destroyedKept", destroyedKept)
    ChildJvm.report("droppedEvictions", counters.droppedEvictions())
    other.value.destroy(true)
    QuiverRuntime.broadcastCache.checkRetained()
    ChildJvm.report("entriesAtEnd", QuiverMetrics.broadcastCacheEntries.entries().size())
    ChildJvm.report("storageAtEnd", ChildJvm.quiverStorage)
  }
}
