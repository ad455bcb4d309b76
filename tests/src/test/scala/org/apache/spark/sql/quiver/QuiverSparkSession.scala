package org.apache.spark.sql.quiver

import dev.quiver.spark.QuiverSettings
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.Suite

/**
 * One local SparkSession for every suite in the test JVM: starting Spark is the slowest part of a
 * suite, and the suites do not change its static configuration. Eight task slots so that eight
 * consumer tasks can overlap.
 */
trait QuiverSparkSession { self: Suite =>

  protected def spark: SparkSession = QuiverSparkSession.session

  /**
   * The suites' broadcast-sized data: `columns`, SQL expressions of `id`, over 3,000 ids in three
   * partitions (so that a broadcast of it coalesces them).
   */
  protected def threePartitionsOf(columns: String*): DataFrame =
    spark.range(0, 3000, 1, 3).selectExpr(columns: _*)
}

object QuiverSparkSession {

  private var current: SparkSession = _

  /** The shared session, started on first use and again after [[discard]]. */
  def session: SparkSession = synchronized {
    if (current == null || current.sparkContext.isStopped) current = start()
    current
  }

  /**
   * Stops the shared session, so that the next suite starts a fresh one. For a test that leaves
   * the session unusable: a fetch failure in local mode makes the scheduler remove the driver's
   * own block manager, which cannot register again without a cluster scheduler, so every task
   * result stored in it from then on is lost.
   */
  def discard(): Unit = synchronized {
    if (current != null) current.stop()
    current = null
  }

  private def start(): SparkSession =
    SparkSession
      .builder()
      .master("local[8]")
      .appName("quiver-tests")
      .config("spark.plugins", QuiverSettings.Plugin) // registers Quiver's settings
      // The suites count decodes and check that entries go with their tasks; retention has a
      // JVM of its own (RetentionSuite).
      .config(QuiverSettings.RetainDecodedBroadcasts, "false")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.sql.adaptive.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.session.timeZone", "UTC")
      .getOrCreate()
}
