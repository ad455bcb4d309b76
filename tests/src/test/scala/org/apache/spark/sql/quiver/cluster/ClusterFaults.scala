package org.apache.spark.sql.quiver.cluster

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration
import scala.reflect.ClassTag

import dev.quiver.spark.{ExecutorCacheReport, QuiverMetrics}
import org.apache.spark.TaskContext
import org.apache.spark.sql.quiver.DefaultLineOnly
import org.scalatest.funsuite.AnyFunSuiteLike

/**
 * Killing an executor JVM (`destroyForcibly`: SIGKILL) while its tasks are in a fault state, and
 * what must hold afterwards, for the fault suites: [[ClusterFaultSuite]] and, on the line with
 * Comet, `CometClusterSuite`.
 *
 * Tasks reach their state, say so in a file of the job's folder ([[FaultSignals]]) and wait there;
 * once tasks in both executor JVMs have, the suite kills one JVM, lets the tasks go and Spark retry
 * the lost ones. Then: the job's rows are right; on the executors alive, Quiver's Arrow memory,
 * held and retained entries and bytes, and the storage memory Spark counts beside its own blocks
 * return to zero after the last release and the broadcast's destroy; and the driver's report of
 * executor caches has no negative figure and no stale one. Stale: a report of an executor Spark
 * removed from the application (the figures of a JVM that no longer exists), once the driver's
 * listeners have heard of the removal.
 */
trait ClusterFaults extends ClusterApp { this: AnyFunSuiteLike =>

  /** Why this suite's faults do not run on this build or machine, if they do not. */
  protected def notHere: Option[String]

  // A canceled beforeAll aborts the suite: where the faults do not run the application is not
  // started, and each test cancels itself instead.
  override protected def beforeAll(): Unit =
    if (notHere.isEmpty) super.beforeAll()

  /** A fault test, canceled where the suite does not run. */
  protected def faultTest(name: String)(body: => Unit): Unit =
    test(name) {
      assume(notHere.isEmpty, notHere.mkString)
      body
    }

  protected def figure(
      reports: Map[String, ExecutorCacheReport],
      name: String
  ): Map[String, Long] =
    reports.map { case (id, report) => id -> report(name) }

  protected def each(executors: Set[String], value: Long): Map[String, Long] =
    executors.map(_ -> value).toMap

  /**
   * The executor a fault job lost (its id and pid), those it had besides, what every task in the
   * fault state said before the kill, and the job's signal folder.
   */
  protected case class Kill(
      victim: String,
      victimPid: Long,
      survivors: Set[String],
      said: Seq[String],
      folder: Path
  )

  /**
   * Starts `job` (given its signal folder), waits until tasks in both executor JVMs reached their
   * fault state, kills the JVM of one, lets the tasks go, and returns the job's results (Spark
   * having retried the killed tasks) with the kill.
   */
  protected def killMidJob[T: ClassTag](name: String)(job: String => Seq[T]): (Seq[T], Kill) = {
    implicit val context: ExecutionContext = ExecutionContext.global
    val executors = awaitExecutors(SharedCluster.Executors)
    val folder = Files.createTempDirectory(s"quiver-fault-$name")
    val running = Future(job(folder.toString))
    awaitCondition(s"$name: tasks in the fault state in both executor JVMs") {
      running.value.foreach(outcome => fail(s"the job ended before the kill: $outcome"))
      FaultSignals.read(folder).map(_._1).toSet.size == SharedCluster.Executors
    }
    val signals = FaultSignals.read(folder)
    val (victim, victimPid, _) = signals.minBy(_._1)
    val kill = Kill(victim, victimPid, executors - victim, signals.map(_._3), folder)
    assert(ProcessHandle.of(victimPid).map[Boolean](_.destroyForcibly()).orElse(false))
    Files.createFile(folder.resolve(FaultSignals.Go))
    val results = Await.result(running, Duration(3, TimeUnit.MINUTES))
    info(
      s"$name: killed executor $victim (pid $victimPid); the tasks said ${kill.said.mkString(", ")}"
    )
    (results, kill)
  }

  /** The figure `name` in what a task said (`name=value` among its words). */
  protected def said(what: String, name: String): Long =
    what
      .split(" ")
      .collectFirst { case kv if kv.startsWith(s"$name=") => kv.stripPrefix(s"$name=").toLong }
      .getOrElse(throw new NoSuchElementException(s"no $name in '$what'"))

  /**
   * The driver's report after the kill: once Spark has removed the killed executor and the
   * driver's listeners have heard of it, no report of it (stale: a JVM that no longer exists), and
   * no negative figure in any report.
   */
  protected def assertDriverReportConsistent(victim: String): Unit = {
    awaitCondition(s"Spark removed the killed executor $victim")(!executorIds.contains(victim))
    sc.listenerBus.waitUntilEmpty()
    val caches = QuiverMetrics.executorBroadcastCaches
    assert(
      !caches.contains(victim),
      s"a stale report of the killed executor: ${caches.get(victim)}"
    )
    assert(caches.keySet.subsetOf(executorIds), s"reports of removed executors: $caches")
    for {
      (id, report) <- caches
      (name, value) <- report.figures
    } assert(value >= 0, s"executor $id reports $name = $value")
  }

  /** Per live executor, a figure read in a task there (one barrier task in every slot). */
  protected def onEveryExecutor(read: () => Long): Map[String, Long] = {
    awaitExecutors(SharedCluster.Executors)
    sc.parallelize(0 until slots, slots)
      .barrier()
      .mapPartitions(_ => Iterator(ClusterTasks.executorId -> read()))
      .collect()
      .groupBy(_._1)
      .map { case (id, values) => id -> values.map(_._2).max }
  }

  /**
   * Waits until `figures` of the reports of every live executor are zero, running a task in every
   * slot before each look (reports reach the driver at task ends): the reports seen last.
   */
  protected def awaitZero(what: String, figures: Seq[String]): Map[String, ExecutorCacheReport] = {
    val live = awaitExecutors(SharedCluster.Executors)
    var last = Map.empty[String, ExecutorCacheReport]
    Eventually.await(120)(s"$what: ${figures.mkString(", ")} zero; last reports $last") {
      assert(taskOnEverySlot() == live)
      last = reports(live)
      figures.forall(name => figure(last, name) == each(live, 0))
    }
    last
  }

  /**
   * After the broadcast's destroy: every live executor holds nothing of Quiver's (no entry held or
   * retained, no bytes held, retained or allocated) and Spark's storage memory holds nothing beside
   * its blocks.
   */
  protected def assertAllFreed(what: String): Unit = {
    awaitZero(
      what,
      Seq(
        "broadcast.entriesHeld",
        "broadcast.bytesHeld",
        "broadcast.entriesRetained",
        "broadcast.bytesRetained",
        "allocatedBytes"
      )
    )
    val live = awaitExecutors(SharedCluster.Executors)
    var storage = Map.empty[String, Long]
    Eventually.await(120)(s"$what: no storage memory beside Spark's blocks; last $storage") {
      storage = onEveryExecutor(() => FaultSignals.quiverStorage)
      storage == each(live, 0)
    }
  }
}

/** What the fault suites' tasks do on the executors to say where they are, and to wait. */
object FaultSignals {

  /** The file whose existence lets the waiting tasks go. */
  val Go = "go"

  /** Writes `executor pid what` to a file of `folder`, then waits (two minutes at most) for `go`. */
  def signalThenWait(folder: String, what: String): Unit = {
    val dir = Paths.get(folder)
    val attempt = TaskContext.get().taskAttemptId()
    val text = s"${ClusterTasks.executorId} ${ClusterTasks.pid} $what"
    // Moved into place whole: the suite never reads half a file.
    val written =
      Files.write(dir.resolve(s"task-$attempt.tmp"), text.getBytes(StandardCharsets.UTF_8))
    Files.move(written, dir.resolve(s"task-$attempt"))
    val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2)
    while (!Files.exists(dir.resolve(Go)) && System.nanoTime() < deadline) Thread.sleep(50)
  }

  /** The tasks that reached their fault state so far: (executor, pid, what they said). */
  def read(folder: Path): Seq[(String, Long, String)] =
    Option(folder.toFile.listFiles()).toSeq.flatten
      .filter(file => file.getName.startsWith("task-") && !file.getName.endsWith(".tmp"))
      .map { file =>
        val words =
          new String(Files.readAllBytes(file.toPath), StandardCharsets.UTF_8).split(" ", 3)
        (words(0), words(1).toLong, words(2))
      }

  /**
   * Spark's storage memory in use on this executor that no block of its memory store accounts
   * for: what Quiver took for its retained (or consumer-held) entries, as Spark counts it. Read
   * without a lock over both: a block put or removed meanwhile sets them apart, so callers read it
   * until it settles.
   */
  def quiverStorage: Long = {
    val env = org.apache.spark.SparkEnv.get
    val memory = env.memoryManager
    val used = memory.onHeapStorageMemoryUsed + memory.offHeapStorageMemoryUsed
    val blocks = env.blockManager
    used - blocks.getMatchingBlockIds(_ => true).flatMap(blocks.getStatus(_)).map(_.memSize).sum
  }

  /**
   * Why the fault suites do not run on this build, if they do not: on the default line's build
   * alone (their time in CI); the others compile them.
   */
  def notThisBuild: Option[String] = DefaultLineOnly.skipReason("the fault suites")

}
