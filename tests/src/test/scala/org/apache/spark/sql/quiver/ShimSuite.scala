package org.apache.spark.sql.quiver

import java.io.Closeable
import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

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
