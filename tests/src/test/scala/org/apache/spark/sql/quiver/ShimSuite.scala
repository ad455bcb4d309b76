package org.apache.spark.sql.quiver

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, Closeable, InputStream}
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import dev.quiver.broadcast.{BroadcastSource, DecodedBroadcastCache}
import dev.quiver.build.{RepoRoot, SupportedVersions}
import dev.quiver.codec.{SparkStreamCodec, StreamCodec}
import dev.quiver.task.TaskScope
import dev.quiver.testing.FakeTask
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{IntVector, VectorSchemaRoot}
import org.apache.arrow.vector.ipc.ArrowStreamWriter
import org.apache.spark.sql.quiver.shim.SparkShims
import org.apache.spark.{SPARK_VERSION, TaskContext, TaskKilledException}
import org.scalatest.funsuite.AnyFunSuite

/** The shim for the running Spark, on live tasks. */
class ShimSuite extends AnyFunSuite with QuiverSparkSession {

  test("the loader picks the shim for the running Spark line") {
    val line = SparkShims.sparkLine(SPARK_VERSION)
    assert(SparkShims.get.sparkLines.contains(line))
  }

  test("the loader names the supported versions when no shim fits") {
    val e = intercept[UnsupportedOperationException] {
      SparkShims.load("2.4.8", getClass.getClassLoader)
    }
    assert(e.getMessage.contains("Spark 2.4.8"))
    // The list the loader read from its resource is pom.xml's, on every profile's artifact.
    val pomLines = JavaLists.toSeq(SupportedVersions.read(RepoRoot.find())).map(_.line)
    assert(SparkShims.SupportedLines == pomLines)
    SparkShims.SupportedLines.foreach(line => assert(e.getMessage.contains(line)))
  }

  test("a completion listener runs once, after the task's body") {
    ShimProbe.reset()
    val ids = spark.sparkContext
      .parallelize(1 to 4, 4)
      .map { i =>
        val context = TaskContext.get()
        val scope = SparkShims.get.taskScope(context)
        val body = new AtomicReference[String]("running")
        scope.onCompletion(() => ShimProbe.completed.add(context.taskAttemptId() -> body.get))
        body.set("done")
        context.taskAttemptId()
      }
      .collect()
    val completed = ShimProbe.completed.toArray.toSeq.map(_.asInstanceOf[(Long, String)])
    assert(completed.map(_._1).sorted == ids.toSeq.sorted)
    assert(completed.forall(_._2 == "done"))
  }

  test("a killed task's throwIfKilled raises Spark's TaskKilledException with the reason") {
    ShimProbe.reset()
    val sc = spark.sparkContext
    implicit val ec: ExecutionContext = ExecutionContext.global
    val job = Future {
      sc.parallelize(Seq(1), 1)
        .map { i =>
          val context = TaskContext.get()
          if (context.attemptNumber() == 0) {
            val scope = SparkShims.get.taskScope(context)
            ShimProbe.attemptId = context.taskAttemptId()
            ShimProbe.started.countDown()
            while (!scope.isInterrupted()) Thread.sleep(5)
            try scope.throwIfKilled()
            catch {
              case e: Throwable =>
                ShimProbe.killed.set(e)
                throw e
            }
          }
          i
        }
        .collect()
    }
    assert(ShimProbe.started.await(60, TimeUnit.SECONDS), "the task never started")
    sc.killTaskAttempt(ShimProbe.attemptId, interruptThread = false, reason = "quiver shim test")
    // Spark reruns a killed task; the second attempt returns at once.
    assert(Await.result(job, 60.seconds).toSeq == Seq(1))
    ShimProbe.killed.get() match {
      case e: TaskKilledException => assert(e.reason == "quiver shim test")
      case other => fail(s"expected TaskKilledException, got $other")
    }
  }

  test("a task killed while it waits for another task's decode: at once on 4.2, else at a check") {
    val line = SparkShims.sparkLine(SPARK_VERSION).split('.').map(_.toInt)
    val tellsOfKills = line(0) > 4 || (line(0) == 4 && line(1) >= 2)
    val allocator = new RootAllocator()
    val cache = new DecodedBroadcastCache(allocator)
    val source = new BlockingSource(allocator)
    KillProbe.reset(cache, source)
    val decoding = new FakeTask()
    implicit val ec: ExecutionContext = ExecutionContext.global
    val decode = Future(cache.open(source, decoding, true))
    try {
      assert(source.entered.await(60, TimeUnit.SECONDS), "the decode never started")
      val sc = spark.sparkContext
      val job = Future {
        sc.parallelize(Seq(1), 1)
          .map { i =>
            val context = TaskContext.get()
            if (context.attemptNumber() == 0) {
              val scope = new CountingScope(SparkShims.get.taskScope(context))
              KillProbe.scope = scope
              KillProbe.attemptId = context.taskAttemptId()
              try KillProbe.cache.open(KillProbe.source, scope, true)
              catch {
                case e: Throwable =>
                  KillProbe.killed.set(e)
                  throw e
              }
            }
            i
          }
          .collect()
      }
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (cache.counters().waits() < 1 && System.nanoTime() < deadline) Thread.sleep(2)
      assert(cache.counters().waits() == 1, "the task never waited")
      // Time for a polling waiter to check a few times; a waiter told of kills must not check.
      Thread.sleep(3 * DecodedBroadcastCache.KILL_CHECK_MILLIS)
      val checksWhileWaiting = KillProbe.scope.checks.get()
      if (tellsOfKills) assert(checksWhileWaiting == 0, "told of kills, it still checked")
      else assert(checksWhileWaiting >= 1, "it never checked for a kill")
      sc.killTaskAttempt(KillProbe.attemptId, interruptThread = false, reason = "quiver kill test")
      // Spark reruns the killed task; the second attempt returns at once.
      assert(Await.result(job, 60.seconds).toSeq == Seq(1))
      KillProbe.killed.get() match {
        case e: TaskKilledException => assert(e.reason == "quiver kill test")
        case other => fail(s"expected TaskKilledException, got $other")
      }
      // It stopped at its first check after the kill; told of kills, that was its only one.
      assert(KillProbe.scope.checksAfterKill.get() == 1)
      if (tellsOfKills) assert(KillProbe.scope.checks.get() == 1)
      assert(!decode.isCompleted, "the decode should still be blocked")
    } finally {
      source.release.countDown()
      Await.result(decode, 60.seconds).close()
      decoding.complete()
      cache.close()
      KillProbe.reset(null, null)
      allocator.close()
    }
  }

  test("openUninterruptibly opens the resource inside a task") {
    val opened = spark.sparkContext
      .parallelize(Seq(1), 1)
      .map { _ =>
        val resource = SparkShims.get.openUninterruptibly(TaskContext.get()) { () =>
          new ShimProbe.Resource
        }
        resource.close()
        resource.closed
      }
      .collect()
    assert(opened.toSeq == Seq(true))
  }

  test("Quiver's settings show in SET -v with their documentation") {
    val rows = spark.sql("SET -v").collect().map(r => r.getString(0) -> r.getString(2)).toMap
    val key = QuiverConf.ShareDecodedBroadcasts.key
    assert(rows.contains(key), s"$key missing from SET -v")
    assert(rows(key).contains("share one decoded copy"))
    assert(spark.conf.get(key) == "true")
  }
}

/** State the tasks above report through; they run in this JVM (local mode). */
object ShimProbe {
  val completed = new ConcurrentLinkedQueue[(Long, String)]()
  val killed = new AtomicReference[Throwable]()
  @volatile var started = new CountDownLatch(1)
  @volatile var attemptId: Long = -1L

  def reset(): Unit = {
    completed.clear()
    killed.set(null)
    started = new CountDownLatch(1)
    attemptId = -1L
  }

  class Resource extends Closeable {
    @volatile var closed = false
    override def close(): Unit = closed = true
  }
}

/** The cache and source the kill test's task reads; it runs in this JVM (local mode). */
object KillProbe {
  @volatile var cache: DecodedBroadcastCache = _
  @volatile var source: BroadcastSource = _
  @volatile var scope: CountingScope = _
  @volatile var attemptId: Long = -1L
  val killed = new AtomicReference[Throwable]()

  def reset(cache: DecodedBroadcastCache, source: BroadcastSource): Unit = {
    this.cache = cache
    this.source = source
    scope = null
    attemptId = -1L
    killed.set(null)
  }
}

/** A task's scope that counts its kill checks, and those made once the task was killed. */
class CountingScope(task: TaskScope) extends TaskScope {
  val checks = new AtomicLong()
  val checksAfterKill = new AtomicLong()

  override def attemptId(): Long = task.attemptId()
  override def onCompletion(listener: Runnable): Unit = task.onCompletion(listener)
  override def isInterrupted(): Boolean = task.isInterrupted()
  override def onKill(listener: Runnable): Boolean = task.onKill(listener)

  override def throwIfKilled(): Unit = {
    checks.incrementAndGet()
    if (task.isInterrupted()) checksAfterKill.incrementAndGet()
    task.throwIfKilled()
  }
}

/** One uncompressed stream of one small batch, whose opening blocks until released. */
class BlockingSource(allocator: RootAllocator) extends BroadcastSource {
  val entered = new CountDownLatch(1)
  val release = new CountDownLatch(1)

  private val bytes: Array[Byte] = {
    val vector = new IntVector("i", allocator)
    try {
      vector.allocateNew(3)
      (0 until 3).foreach(i => vector.set(i, i))
      vector.setValueCount(3)
      val root = VectorSchemaRoot.of(vector)
      val out = new ByteArrayOutputStream()
      val writer = new ArrowStreamWriter(root, null, out)
      writer.start()
      writer.writeBatch()
      writer.end()
      writer.close()
      out.toByteArray
    } finally vector.close()
  }

  override def broadcastId(): Long = 4242L
  override def streamCount(): Int = 1
  override def codec(): StreamCodec = SparkStreamCodec.NONE

  override def openStream(index: Int): InputStream = {
    entered.countDown()
    release.await()
    new ByteArrayInputStream(bytes)
  }
}
