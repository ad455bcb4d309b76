package org.apache.spark.sql.quiver.cluster

import scala.collection.mutable

import dev.quiver.spark.{ArrowBatches, QuiverSettings}
import dev.quiver.spark.broadcast.ArrowBroadcast
import dev.quiver.spark.shuffle.{QuiverShuffle, ShufflePartitioning}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.quiver.SparkRows
import org.apache.spark.sql.quiver.shuffle.ShuffleTestSupport
import org.scalatest.funsuite.AnyFunSuite

/**
 * A broadcast read by tasks in two executor JVMs, each fetching it through Spark's torrent
 * broadcast and decoding its own copy, sharing off and on (retention off: what the tasks'
 * overlap alone gives); and Quiver's shuffle exchange between the two JVMs.
 */
class ClusterSharingSuite extends AnyFunSuite with ClusterApp {

  override protected def appSettings: Map[String, String] = Map(
    QuiverSettings.RetainDecodedBroadcasts -> "false",
    // Executors on one host read each other's shuffle files from disk by default; a cluster's
    // executors on different hosts fetch them through the block transfer service, as here.
    "spark.shuffle.readHostLocalDisk" -> "false"
  )

  private lazy val dimFrame = longsFrame(20000)
  private lazy val dim = ArrowBroadcast.of(dimFrame)

  test("sharing off: each task in each executor JVM decodes its own copy") {
    dim // broadcast before the first reading
    val before = reports()
    val SlotReads(reads, metrics) = readOnEverySlot(dim, share = false)
    val after = reports()
    assertEveryTaskReadAll(reads, dimFrame)
    val tasksOn = reads.groupBy(_.executorId).map { case (id, r) => id -> r.size.toLong }
    record("private decodes", growth(before, after, "broadcast.privateDecodes"))
    assert(growth(before, after, "broadcast.privateDecodes") == tasksOn)
    assert(growth(before, after, "broadcast.decodes").values.forall(_ == 0))
    // The same, per task, as the tasks' accumulators brought it back from both JVMs.
    assert(metrics.decodedPrivately.value == slots && metrics.decoded.value == 0)
    assert(metrics.shared.value == 0 && metrics.retained.value == 0)
    assert(metrics.decodeTime.value > 0)
    after.values.foreach { report =>
      assert(report("broadcast.entriesHeld") == 0)
      assert(report("allocatedBytes") == 0, s"executor ${report.executorId} kept Arrow memory")
    }
  }

  test("sharing on: the tasks of each executor JVM that overlap decode once, in that JVM") {
    dim
    val before = reports()
    val SlotReads(reads, metrics) = readOnEverySlot(dim, share = true)
    val after = reports()
    assertEveryTaskReadAll(reads, dimFrame)
    record("decodes", growth(before, after, "broadcast.decodes"))
    record("shared reads", growth(before, after, "broadcast.sharedReads"))
    assert(growth(before, after, "broadcast.decodes") == executorIds.map(_ -> 1L).toMap)
    assert(growth(before, after, "broadcast.sharedReads") == executorIds.map(_ -> 1L).toMap)
    assert(growth(before, after, "broadcast.privateDecodes").values.forall(_ == 0))
    val executors = SharedCluster.Executors.toLong
    assert(metrics.decoded.value == executors && metrics.shared.value == slots - executors)
    assert(metrics.decodedPrivately.value == 0 && metrics.retained.value == 0)
    after.values.foreach { report =>
      assert(report("broadcast.entriesHeld") == 0, "the entry went with its last task")
      assert(report("allocatedBytes") == 0, s"executor ${report.executorId} kept Arrow memory")
    }
  }

  test("the shuffle exchange moves Arrow batches between the executor JVMs") {
    val remoteBlocks = mutable.ArrayBuffer.empty[(String, Long)]
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
        Option(end.taskMetrics).foreach { metrics =>
          remoteBlocks.synchronized {
            remoteBlocks += end.taskInfo.executorId -> metrics.shuffleReadMetrics.remoteBlocksFetched
          }
          ()
        }
    }
    sc.addSparkListener(listener)
    try {
      val df = ShuffleTestSupport.allTypes(spark, 3000, 8)
      val exchange =
        QuiverShuffle.exchange(
          ArrowBatches.of(df, 256),
          df.schema,
          ShufflePartitioning.hash(4, "k")
        )
      val schema = exchange.schema
      val rows = exchange.batches
        .mapPartitions(batches => batches.flatMap(batch => SparkRows.fromBatch(batch, schema)))
        .collect()
        .toSeq
      assert(SparkRows.sorted(rows) == SparkRows.sorted(df.collect().toSeq))
      sc.listenerBus.waitUntilEmpty()
      val fetched = remoteBlocks.synchronized(remoteBlocks.toList)
      assert(fetched.map(_._1).toSet == executorIds, "tasks on both executors")
      assert(fetched.map(_._2).sum > 0, "no shuffle block crossed between the executors")
    } finally sc.removeSparkListener(listener)
  }
}
