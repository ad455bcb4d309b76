package org.apache.spark.sql.quiver

import dev.quiver.spark.QuiverMetrics
import dev.quiver.spark.broadcast.{ArrowBroadcast, BroadcastStreams, QuiverBroadcasts}
import dev.quiver.testing.CDataConsumer
import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * Spark tasks hand their broadcast batches to a native-style consumer through the Arrow C Data
 * Interface, and the consumer imports and releases them on a thread of its own after the tasks
 * ended. In a JVM of its own whose class path leaves out Comet's jar and adds Arrow's
 * `arrow-c-data`: Comet 1.2.0 carries its own `org.apache.arrow.c` classes, built on its shaded
 * Arrow (see docs/engines.md), so this module's class path has only Comet's, which the main job's
 * Comet runs need.
 */
class CDataExportSuite extends AnyFunSuite {

  private lazy val results: Map[String, String] =
    ChildJvm.resultsOn(
      entry => !entry.contains("comet-spark"),
      Seq(CDataExportSuite.arrowCData),
      CDataExportChild.getClass
    )

  private def figure(key: String): Long = results(key).toLong

  test("the child's C Data classes are Arrow's own, not Comet's") {
    assert(!results("cDataFrom").contains("comet"), results("cDataFrom"))
  }

  test("every exported batch holds the entry past its task, until the consumer releases it") {
    assert(figure("exportedRows") == 10000)
    assert(figure("pendingExports") > 0)
    // Two tasks, each exporting every batch to its consumer: one hold per task and consumer.
    assert(figure("pendingExports") >= 2)
    assert(figure("holdersAfterTasks") == 2, "one hold for all of a task's arrays")
    assert(figure("outstandingHolds") == 2)
    assert(figure("entriesHeldAfterTasks") == 1)
    assert(figure("retainedWhileExported") == 0, "not retained while the consumer holds it")
    assert(figure("storageWhileExported") > 0, "its tasks gone, it is in storage memory")
    assert(figure("importedRows") == 10000)
    assert(figure("consumerBytes") == 0, "the consumer released what it imported")
  }

  test("at the last release the entry is retained; the plugin's gauges say what the cache does") {
    assert(figure("retainedAfterRelease") == 1)
    assert(figure("bytesRetained") > 0)
    assert(figure("gaugeBytesRetained") == figure("bytesRetained"))
    assert(figure("gaugeEntriesHeld") == 0)
    assert(figure("doubleReleases") == 0)
    assert(figure("entriesAfterDestroy") == 0)
    assert(figure("allocatedAfterDestroy") == 0)
    assert(figure("storageAfterDestroy") == 0)
  }
}

object CDataExportSuite {

  /** Arrow's `arrow-c-data` of this profile, which the build copies beside the tests. */
  def arrowCData: String = {
    val jar = sys.props.getOrElse("quiver.cdata.jar", "")
    require(new java.io.File(jar).isFile, s"no arrow-c-data jar at '$jar' (the build copies it)")
    jar
  }
}

/** The child: a local Spark with Quiver's plugin and retention, and one C Data consumer. */
object CDataExportChild {

  /** The consumer the tasks export to: local mode, so one per JVM, shared by the tasks. */
  lazy val consumer = new CDataConsumer()

  def main(args: Array[String]): Unit = {
    val spark = ChildJvm.retainingSpark("local[2]", "quiver-cdata-export")
    try scenario(spark)
    finally {
      spark.stop()
      consumer.close()
    }
  }

  private def scenario(spark: SparkSession): Unit = {
    val where = Class.forName("org.apache.arrow.c.Data").getProtectionDomain.getCodeSource
    ChildJvm.report("cDataFrom", where.getLocation)
    val counters = QuiverMetrics.broadcastCache
    val dim = ArrowBroadcast.of(spark.range(0, 5000, 1, 2).selectExpr("id", "concat('v', id) AS s"))
    val value = dim.value
    val exported = spark.sparkContext
      .parallelize(0 until 2, 2)
      .mapPartitions { _ =>
        val reader = QuiverBroadcasts.open(value, BroadcastStreams.byteArrays, share = true)
        Iterator(
          consumer.exportEachBatch(reader, s"consumer of task ${TaskContext.get().taskAttemptId()}")
        )
      }
      .collect()
      .sum
    ChildJvm.report("exportedRows", exported)
    // The tasks have ended: only the exports hold the entry now.
    ChildJvm.report("pendingExports", consumer.pending())
    val entries = JavaLists.toSeq(QuiverMetrics.broadcastCacheEntries.entries())
    ChildJvm.report("holdersAfterTasks", entries.map(_.holders()).sum)
    ChildJvm.report("outstandingHolds", QuiverRuntime.broadcastCache.outstandingHolds().size())
    ChildJvm.report("entriesHeldAfterTasks", counters.entriesHeld())
    ChildJvm.report("retainedWhileExported", counters.entriesRetained())
    ChildJvm.report("storageWhileExported", ChildJvm.quiverStorage)

    ChildJvm.report("importedRows", consumer.importAndReleaseOnAnotherThread())
    ChildJvm.report("consumerBytes", consumer.allocatedBytes())
    ChildJvm.report("retainedAfterRelease", counters.entriesRetained())
    ChildJvm.report("bytesRetained", counters.bytesRetained())
    ChildJvm.report("gaugeBytesRetained", ChildJvm.pluginGauge("broadcast.bytesRetained"))
    ChildJvm.report("gaugeEntriesHeld", ChildJvm.pluginGauge("broadcast.entriesHeld"))
    ChildJvm.report("doubleReleases", counters.doubleReleases())

    // Blocking: the block manager has dropped the broadcast when the cache next checks.
    value.destroy(true)
    QuiverRuntime.broadcastCache.checkRetained()
    ChildJvm.report("entriesAfterDestroy", QuiverMetrics.broadcastCacheEntries.entries().size())
    ChildJvm.report("allocatedAfterDestroy", QuiverMetrics.allocatedBytes)
    ChildJvm.report("storageAfterDestroy", ChildJvm.quiverStorage)
  }
}
