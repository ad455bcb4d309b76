package org.apache.spark.sql.quiver.cluster

import java.nio.file.Files

import dev.quiver.spark.QuiverSettings
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.quiver.CDataExportSuite
import org.scalatest.funsuite.AnyFunSuite

/**
 * An executor JVM killed while C Data exports of its broadcast are out, kept by a consumer thread,
 * and while its retained entry is evicted under storage pressure: see [[ClusterFaults]] for what
 * each test then checks. One application for both.
 *
 * The executors get Arrow's `arrow-c-data` ahead of their class path: Comet's jar, which the
 * default line's class path holds, carries classes of the same names built on its shaded Arrow.
 */
class ClusterFaultSuite extends AnyFunSuite with ClusterFaults {

  override protected def notHere: Option[String] = FaultSignals.notThisBuild

  override protected def appSettings: Map[String, String] = Map(
    QuiverSettings.RetainDecodedBroadcasts -> "true",
    "spark.executor.extraClassPath" ->
      (CDataExportSuite.arrowCData +: StandaloneCluster.classDirectories).mkString(":"),
    // A smaller storage pool: less to fill for pressure.
    "spark.memory.fraction" -> "0.25",
    // No block removed in the background while a task compares storage memory with its blocks.
    "spark.cleaner.referenceTracking" -> "false"
  )

  /** Tasks of a fault job: two waves on the four slots, the first waiting in both executors. */
  private val Tasks = 8

  private def everyTask[T: scala.reflect.ClassTag](work: => T): Seq[T] =
    sc.parallelize(0 until Tasks, Tasks).mapPartitions(_ => Iterator(work)).collect().toSeq

  /** The job's rows are the broadcast's in every task, and none came from the killed JVM. */
  private def assertReadsRight(
      reads: Seq[ClusterTasks.Read],
      frame: DataFrame,
      kill: Kill
  ): Unit = {
    assert(reads.size == Tasks)
    assert(!reads.map(_.pid).contains(kill.victimPid), "a result from the killed JVM")
    val expected = frame.selectExpr("count(*)", "sum(v)").head()
    reads.foreach { read =>
      assert((read.rows, read.sum) == ((expected.getLong(0), expected.getLong(1))), read)
    }
  }

  faultTest("an executor killed while a consumer thread keeps C Data exports of its broadcast") {
    val frame = longsFrame(5000)
    val dim = ArrowBroadcast.of(frame)
    val value = dim.value
    val (reads, kill) = killMidJob("export") { folder =>
      everyTask(ClusterFaultTasks.exportKeptByConsumer(value, folder))
    }
    assert(kill.said.forall(what => said(what, "unreleased") >= 1), kill)
    assertReadsRight(reads, frame, kill)
    assertDriverReportConsistent(kill.victim)

    // The tasks have ended and the consumers keep their exports: the entry is theirs alone, and
    // its bytes are in storage memory.
    val kept = reports(kill.survivors)
    assert(figure(kept, "broadcast.entriesHeld") == each(kill.survivors, 1))
    val storage = onEveryExecutor(() => FaultSignals.quiverStorage)
    kill.survivors.foreach(id => assert(storage(id) > 0, s"executor $id: $storage"))

    // The consumers release on their threads, after the tasks: the entry is retained then.
    Files.createFile(kill.folder.resolve(ClusterFaultTasks.Release))
    val released = awaitZero("export released", Seq("broadcast.entriesHeld", "broadcast.bytesHeld"))
    kill.survivors.foreach { id =>
      assert(released(id)("broadcast.entriesRetained") == 1, s"executor $id: ${released(id)}")
    }
    val consumers = onEveryExecutor(() => ClusterFaultTasks.consumer.allocatedBytes())
    assert(consumers.values.forall(_ == 0), s"consumers' memory: $consumers")

    dim.value.destroy()
    assertAllFreed("export")
    assertDriverReportConsistent(kill.victim)
  }

  faultTest("an executor killed while its retained entry is evicted under storage pressure") {
    val frame = longsFrame(5000)
    val dim = ArrowBroadcast.of(frame)
    val value = dim.value
    awaitExecutors(SharedCluster.Executors)
    readOnEverySlot(dim, share = true)
    val before = reports()
    assert(figure(before, "broadcast.entriesRetained").values.forall(_ >= 1), before)
    val (reads, kill) = killMidJob("pressure") { folder =>
      everyTask(ClusterFaultTasks.readUnderPressure(value, folder))
    }
    assert(kill.said.forall(what => said(what, "pressureEvictions") >= 1), kill)
    assertReadsRight(reads, frame, kill)
    assertDriverReportConsistent(kill.victim)
    val evicted = growth(before, reports(kill.survivors), "broadcast.evictions.pressure")
    record("evicted under pressure", evicted)
    kill.survivors.foreach(id => assert(evicted(id) >= 1, s"executor $id: $evicted"))

    onEveryExecutor(() => ClusterFaultTasks.relieveStorage())
    dim.value.destroy()
    assertAllFreed("pressure")
    assertDriverReportConsistent(kill.victim)
  }
}
