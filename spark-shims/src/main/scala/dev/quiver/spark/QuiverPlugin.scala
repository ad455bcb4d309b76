package dev.quiver.spark

import java.util.{Collections, Map => JMap}

import dev.quiver.annotation.Public
import org.apache.spark.{SparkContext, TaskFailedReason}
import org.apache.spark.api.plugin.{DriverPlugin, ExecutorPlugin, PluginContext, SparkPlugin}
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorRemoved}
import org.apache.spark.sql.quiver.{QuiverConf, QuiverRuntime}
import org.apache.spark.sql.quiver.broadcast.{CacheMetrics, ExecutorCacheReports}

/**
 * Quiver's Spark plugin: `spark.plugins=dev.quiver.spark.QuiverPlugin` (see
 * [[QuiverSettings.Plugin]]). On the driver it registers Quiver's settings when Spark starts, so
 * that `SET -v` lists them and a session that sets an executor-wide one fails, before any Quiver
 * call. Without the plugin the settings are registered by the first call into Quiver's API.
 *
 * On the driver and on every executor it also registers the decoded-broadcast cache's metrics with
 * Spark's metrics system, under `plugin.dev.quiver.spark.QuiverPlugin` (see `docs/tuning.md`).
 * Each executor also sends its figures to the driver after every task that ends there, so that the
 * driver sees every executor's cache ([[QuiverMetrics.executorBroadcastCaches]]).
 */
@Public
class QuiverPlugin extends SparkPlugin {

  override def driverPlugin(): DriverPlugin = new DriverPlugin {
    private var reports: ExecutorCacheReports = _

    override def init(sc: SparkContext, context: PluginContext): JMap[String, String] = {
      QuiverConf.register()
      val started = ExecutorCacheReports.start()
      reports = started
      // A lost executor's last report would read as memory still held: it goes with the executor.
      sc.addSparkListener(new SparkListener {
        override def onExecutorRemoved(removed: SparkListenerExecutorRemoved): Unit =
          started.executorRemoved(removed.executorId)
      })
      Collections.emptyMap()
    }

    override def registerMetrics(appId: String, context: PluginContext): Unit =
      CacheMetrics.register(context.metricRegistry())

    override def receive(message: Any): AnyRef = message match {
      case report: ExecutorCacheReport =>
        reports.receive(report)
        null // sent, not asked: no reply
      case other =>
        throw new IllegalArgumentException(s"Quiver's driver plugin got an unknown message: $other")
    }

    /**
     * The application stops: the driver's own reads (Spark reads a join's build side on the
     * driver while it generates code) give back what they retained. In local mode the executor's
     * plugin closes the same cache.
     */
    override def shutdown(): Unit = {
      if (reports != null) ExecutorCacheReports.stop(reports)
      QuiverRuntime.closeBroadcastCache()
    }
  }

  override def executorPlugin(): ExecutorPlugin = new ExecutorPlugin {
    private var reports: ExecutorCacheReports.Sender = _

    override def init(context: PluginContext, extraConf: JMap[String, String]): Unit = {
      CacheMetrics.register(context.metricRegistry())
      reports = new ExecutorCacheReports.Sender(context)
    }

    // Spark calls these after the task's completion listeners, so the task's reads have ended.
    override def onTaskSucceeded(): Unit = reports.taskEnded()

    override def onTaskFailed(failureReason: TaskFailedReason): Unit = reports.taskEnded()

    /** The executor stops: its retained broadcasts give their storage memory back. */
    override def shutdown(): Unit = QuiverRuntime.closeBroadcastCache()
  }
}
