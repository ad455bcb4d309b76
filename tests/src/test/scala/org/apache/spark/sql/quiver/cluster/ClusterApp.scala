package org.apache.spark.sql.quiver.cluster

import dev.quiver.spark.{ExecutorCacheReport, QuiverMetrics}
import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD, BroadcastReadMetrics}
import org.apache.spark.SparkContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.quiver.QuiverSparkSession
import org.scalatest.{BeforeAndAfterAll, Informing, Outcome, TestSuite}

/**
 * One application of a cluster suite on the [[SharedCluster]]: its session (started before the
 * suite's first test, after the tests' shared local session is stopped: one SparkContext per JVM),
 * its executors, and their caches as their reports reach the driver.
 */
trait ClusterApp extends TestSuite with Informing with BeforeAndAfterAll {

  /** Settings of this application beyond the cluster's. */
  protected def appSettings: Map[String, String]

  private var session: SparkSession = _
  private val taskEnds = new TaskEndCounts

  protected def spark: SparkSession = session
  protected def sc: SparkContext = session.sparkContext
  protected def cluster: StandaloneCluster = SharedCluster.cluster

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    QuiverSparkSession.discard()
    val builder = cluster.session(
      getClass.getSimpleName,
      SharedCluster.Executors,
      SharedCluster.CoresPerExecutor
    )
    appSettings.foreach { case (key, value) => builder.config(key, value) }
    session = builder
      .config("spark.sql.adaptive.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .getOrCreate()
    sc.addSparkListener(taskEnds)
    awaitExecutors(SharedCluster.Executors)
  }

  override protected def afterAll(): Unit =
    try
      if (session != null) {
        session.stop()
        // The driver read build sides too (Spark reads them while generating a join's code); its
        // plugin's shutdown must have let them go.
        assert(QuiverMetrics.broadcastCacheEntries.isEmpty, "the driver's cache outlived its app")
        assert(QuiverMetrics.allocatedBytes == 0, "the driver kept Arrow memory")
      }
    finally super.afterAll()

  /** Records each executor's `figures` in the suite's report, for the note on what was seen. */
  protected def record(what: String, figures: Map[String, Long]): Unit =
    info(
      s"$what: " + figures.toSeq.sorted.map { case (id, n) => s"executor $id $n" }.mkString(", ")
    )

  // A failing test prints the cluster's logs, where an executor's own failure is.
  abstract override def withFixture(test: NoArgTest): Outcome = {
    val outcome = super.withFixture(test)
    if (outcome.isFailed || outcome.isExceptional) println(cluster.logTails())
    outcome
  }

  /** Task slots of the application: every slot runs one task of a barrier stage. */
  protected val slots: Int = SharedCluster.Executors * SharedCluster.CoresPerExecutor

  /** `rows` rows of a long `id`, a long `v = 3 id` and a string: the suites' broadcasts. */
  protected def longsFrame(rows: Long): DataFrame =
    spark.range(0, rows, 1, 2).selectExpr("id", "id * 3 AS v", "concat('row-', id) AS s")

  /**
   * Every slot reads `broadcast` at once (a barrier stage: two tasks in each executor JVM), each
   * holding it until all have read a batch.
   */
  protected def readOnEverySlot(broadcast: ArrowBroadcast, share: Boolean): SlotReads = {
    val rdd = new ArrowBroadcastRDD(sc, broadcast.value, slots, share)
    val reads = rdd
      .barrier()
      .mapPartitions(batches => Iterator(ClusterTasks.readTogether(batches)))
      .collect()
      .toSeq
    SlotReads(reads, rdd.readMetrics)
  }

  /** What the tasks of [[readOnEverySlot]] read, and the per-task figures their RDD summed. */
  protected case class SlotReads(reads: Seq[ClusterTasks.Read], metrics: BroadcastReadMetrics)

  /**
   * The reads ran in the executor JVMs (both, none in the driver), and each read all of `frame`:
   * its rows and the sum of its `v`, as Spark counts them.
   */
  protected def assertEveryTaskReadAll(reads: Seq[ClusterTasks.Read], frame: DataFrame): Unit = {
    assert(reads.map(_.executorId).toSet == executorIds, "a task on each executor")
    assert(reads.map(_.pid).toSet.size == SharedCluster.Executors, "one JVM per executor")
    assert(!reads.map(_.pid).contains(ProcessHandle.current().pid()), "no task in the driver")
    val expected = frame.selectExpr("count(*)", "sum(v)").head()
    reads.foreach { read =>
      assert(read.rows == expected.getLong(0))
      assert(read.sum == expected.getLong(1))
    }
  }

  /** One task in every slot at once, reading nothing: a task boundary in every executor JVM. */
  protected def taskOnEverySlot(): Set[String] =
    sc.parallelize(0 until slots, slots)
      .barrier()
      .mapPartitions(_ => Iterator(ClusterTasks.executorId))
      .collect()
      .toSet

  /** The executors the application has now, by Spark's ids. */
  protected def executorIds: Set[String] = sc.getExecutorIds().toSet

  /** Waits until the application has `count` executors registered; fails with the logs if not. */
  protected def awaitExecutors(count: Int): Set[String] = {
    awaitCondition(s"$count executors registered")(executorIds.size >= count)
    executorIds
  }

  /**
   * The caches of `executors` once each has reported every task the driver saw end on it (those
   * of a lost executor never all arrive: name the live ones). An executor that ran no task yet
   * has no report.
   */
  protected def reports(executors: Set[String] = executorIds): Map[String, ExecutorCacheReport] =
    taskEnds.awaitReports(sc, executors)(cluster.logTails())

  /** How much `figure` grew on each executor between two readings of [[reports]]. */
  protected def growth(
      before: Map[String, ExecutorCacheReport],
      after: Map[String, ExecutorCacheReport],
      figure: String
  ): Map[String, Long] =
    after.map { case (id, report) =>
      id -> (report(figure) - before.get(id).fold(0L)(_(figure)))
    }

  protected def awaitCondition(what: String, seconds: Int = 120)(condition: => Boolean): Unit =
    Eventually.await(seconds)(s"$what\n${cluster.logTails()}")(condition)
}
