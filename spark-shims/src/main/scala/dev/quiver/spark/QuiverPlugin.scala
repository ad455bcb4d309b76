package dev.quiver.spark

import java.util.{Collections, Map => JMap}

import dev.quiver.annotation.Public
import org.apache.spark.SparkContext
import org.apache.spark.api.plugin.{DriverPlugin, ExecutorPlugin, PluginContext, SparkPlugin}
import org.apache.spark.sql.quiver.{QuiverConf, QuiverRuntime}
import org.apache.spark.sql.quiver.broadcast.CacheMetrics

/**
 * Quiver's Spark plugin: `spark.plugins=dev.quiver.spark.QuiverPlugin` (see
 * [[QuiverSettings.Plugin]]). On the driver it registers Quiver's settings when Spark starts, so
 * that `SET -v` lists them and a session that sets an executor-wide one fails, before any Quiver
 * call. Without the plugin the settings are registered by the first call into Quiver's API.
 *
 * On the driver and on every executor it also registers the decoded-broadcast cache's metrics with
 * Spark's metrics system, under `plugin.dev.quiver.spark.QuiverPlugin` (see `docs/tuning.md`).
 */
@Public
class QuiverPlugin extends SparkPlugin {

  override def driverPlugin(): DriverPlugin = new DriverPlugin {
    override def init(sc: SparkContext, context: PluginContext): JMap[String, String] = {
      QuiverConf.register()
      Collections.emptyMap()
    }

    override def registerMetrics(appId: String, context: PluginContext): Unit =
      CacheMetrics.register(context.metricRegistry())
  }

  override def executorPlugin(): ExecutorPlugin = new ExecutorPlugin {
    override def init(context: PluginContext, extraConf: JMap[String, String]): Unit =
      CacheMetrics.register(context.metricRegistry())

    /** The executor stops: its retained broadcasts give their storage memory back. */
    override def shutdown(): Unit = QuiverRuntime.closeBroadcastCache()
  }
}
