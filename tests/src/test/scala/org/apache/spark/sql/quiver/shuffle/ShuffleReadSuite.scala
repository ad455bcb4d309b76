package org.apache.spark.sql.quiver.shuffle

import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.spark.sql.quiver.QuiverRuntime
import dev.quiver.spark.shuffle.ShufflePartitioning
import org.apache.spark.{SparkException, TaskContext, TaskKilledException}
import org.apache.spark.sql.DataFrame
import org.scalatest.concurrent.Eventually
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.{Seconds, Span}

/** How a reduce task reads: its read sizes, and what a task that stops or is killed leaves. */
class ShuffleReadSuite extends AnyFunSuite with ShuffleTestSupport with Eventually {

  /** Blocks of some hundreds of KiB, so that reads could be large. */
  private def wide: DataFrame =
    spark
      .range(0, 60000, 1, 2)
      .selectExpr("id AS k", "concat('value-', id) AS s", "id * 2 AS l", "array(id, id) AS a")

  private val paths = Seq("decoding", "raw-block")

  for (path <- paths) {
    test(s"the $path path reads Spark's stream in large pieces and never calls available()") {
      CountingReads.reset()
      val exchange = this.exchange(wide, ShufflePartitioning.Single, rowsPerBatch = 20000)
      val (batches, rawBlocks) = CountingReads.reading(exchange, settings())
      val read =
        if (path == "decoding") batches.map(_.numRows().toLong).collect().sum
        else rawBlocks.map(_.body.remaining().toLong).collect().sum
      assert(read > 0)
      assert(CountingReads.reads.get() > 0, "the wrapper saw no reads")
      assert(CountingReads.availableCalls.get() == 0)
      // Channels.newChannel asks for at most 8 KiB per read.
      assert(CountingReads.largestRequested.get() > 8 * 1024)
      assert(CountingReads.largestReturned.get() > 8 * 1024)
    }

    test(s"a consumer that stops early on the $path path leaves nothing open") {
      val exchange = this.exchange(wide, ShufflePartitioning.RoundRobin(2), rowsPerBatch = 5000)
      val first =
        if (path == "decoding") exchange.batches.mapPartitions(it => Iterator(it.next().numRows()))
        else exchange.rawBlocks.mapPartitions(it => Iterator(it.next().body.remaining()))
      assert(first.collect().forall(_ > 0))
      // The task's completion listeners closed the open stream, batch and allocator; afterEach checks.
    }
  }

  test("a job killed while its reduce task reads stops at the next batch and leaks nothing") {
    KillProbe.reset()
    val exchange =
      this.exchange(wide, ShufflePartitioning.Single, rowsPerBatch = 2000, batchSize = 1)
    val sc = spark.sparkContext
    implicit val ec: ExecutionContext = ExecutionContext.global
    val job = Future {
      sc.setJobGroup(KillProbe.Group, "kill a reading reduce task", interruptOnCancel = false)
      try
        exchange.batches
          .mapPartitions { batches =>
            val context = TaskContext.get()
            batches.next()
            KillProbe.reading.countDown()
            while (!context.isInterrupted()) Thread.sleep(5)
            try {
              var more = 0
              while (batches.hasNext) {
                batches.next()
                more += 1
              }
              Iterator(more)
            } catch {
              case e: Throwable =>
                KillProbe.stoppedBy.set(e)
                throw e
            }
          }
          .collect()
      finally sc.clearJobGroup()
    }
    assert(KillProbe.reading.await(60, TimeUnit.SECONDS), "the reduce task never started reading")
    sc.cancelJobGroup(KillProbe.Group)
    val failure = intercept[SparkException](Await.result(job, 60.seconds))
    assert(failure.getMessage.contains("cancel"), failure.getMessage)
    // The job ends when it is cancelled; the task ends, and releases what it held, just after.
    eventually(timeout(Span(30, Seconds))) {
      assert(KillProbe.stoppedBy.get() != null)
      assert(QuiverRuntime.allocator.getAllocatedMemory == 0)
    }
    assert(KillProbe.stoppedBy.get().isInstanceOf[TaskKilledException], KillProbe.stoppedBy.get())
  }
}

/** State the killed task reports through; it runs in this JVM (local mode). */
object KillProbe {
  val Group = "quiver-shuffle-kill"
  @volatile var reading = new CountDownLatch(1)
  val stoppedBy = new AtomicReference[Throwable]()

  def reset(): Unit = {
    reading = new CountDownLatch(1)
    stoppedBy.set(null)
  }
}
