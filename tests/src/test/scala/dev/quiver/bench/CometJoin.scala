package dev.quiver.bench

import java.lang.reflect.InvocationTargetException

import org.apache.arrow.memory.BoundsChecking
import org.apache.arrow.vector.NullCheckingForGet
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan

/**
 * The join section's "Comet" setting: the same SQL query run by Comet 1.2.0, with its native
 * broadcast hash join. Comet's code is reached by class and config names alone, so that the
 * builds without its jar (every line but Spark 4.1) compile this file.
 */
object CometJoin {

  val Setting = "Comet"

  /** Comet's native joins reading their broadcasts through Quiver (the comet module). */
  val OnQuiverSetting = "Comet on Quiver"

  private val Extensions = "org.apache.comet.CometSparkSessionExtensions"

  /** `spark.sql.extensions` for Comet on Quiver: Quiver's adapter, which applies Comet's. */
  val ExtensionsOnQuiver = "dev.quiver.comet.QuiverCometExtensions"
  private val NativeLibrary = "org.apache.comet.NativeBase"

  /** Comet's Spark plugin, which a Comet deployment lists in `spark.plugins`. */
  val Plugin = "org.apache.spark.CometPlugin"

  /** Comet's shuffle manager: Comet's native shuffle, Spark's sort shuffle for the rest. */
  val ShuffleManager = "org.apache.spark.sql.comet.execution.shuffle.CometShuffleManager"

  /**
   * What Comet's SparkContext is started with. Comet 1.2.0 disables itself unless Spark runs in
   * off-heap memory mode, a static setting that gives Spark's own operators an off-heap pool and
   * Tungsten memory mode: so Comet gets a SparkContext of its own (as on+retain does) and the
   * Spark / off / on figures keep theirs untouched. Comet's shuffle stays off: it needs its own
   * shuffle manager (another static setting), and this query's one shuffle carries a row per
   * probe task (the partial sums), not the join.
   */
  val sessionConfig: Seq[(String, String)] = Seq(
    "spark.sql.extensions" -> Extensions,
    "spark.memory.offHeap.enabled" -> "true",
    "spark.memory.offHeap.size" -> "2g",
    "spark.comet.enabled" -> "true",
    "spark.comet.exec.enabled" -> "true",
    "spark.comet.shuffle.enabled" -> "false"
  )

  /** The jar holds Comet's native library for Linux on amd64 and aarch64 only. */
  private def bundledLibrary: String = {
    val arch = sys.props("os.arch") match {
      case "x86_64" => "amd64"
      case other => other
    }
    s"org/apache/comet/linux/$arch/libcomet.so"
  }

  /** Whether this build has Comet's classes and its jar a native library for this machine. */
  def bundledForThisMachine: Boolean =
    hasClass(Extensions) && sys.props("os.name") == "Linux" &&
      getClass.getClassLoader.getResource(bundledLibrary) != null

  /**
   * Why the Comet setting cannot run here, if it cannot: loads Comet's native library (once per
   * JVM). Comet sets Arrow's properties that turn its bounds and null checks off as it loads it;
   * Arrow reads them once per JVM, so Spark's Arrow reads them first here: Spark's and Quiver's
   * settings keep Arrow's defaults, as before Comet was in the bench, while Comet's own (shaded)
   * Arrow, first used after the load, runs with the checks off, as in a Comet deployment.
   */
  def unavailable(master: Option[String]): Option[String] = {
    val checks = (BoundsChecking.BOUNDS_CHECKING_ENABLED, NullCheckingForGet.NULL_CHECKING_ENABLED)
    if (master.nonEmpty)
      Some(
        "Comet runs on the embedded local Spark only: its jar is not on the cluster's class path"
      )
    else if (!hasClass(Extensions))
      Some("Comet 1.2.0 is a dependency of the Spark 4.1 build only, so this build skips it")
    else if (!bundledForThisMachine)
      Some(
        s"Comet's jar has no native library for ${sys.props("os.name")} on ${sys.props("os.arch")}"
      )
    else
      try {
        val loaded = Class.forName(NativeLibrary).getMethod("isLoaded").invoke(null)
        if (loaded == java.lang.Boolean.TRUE) {
          require(checks == ((true, true)), s"Arrow's bounds and null checks are $checks")
          None
        } else Some("Comet's native library did not load")
      } catch {
        case e: InvocationTargetException =>
          Some(s"Comet's native library did not load: ${e.getCause}")
      }
  }

  /**
   * Fails unless Comet planned the join natively (it falls back to Spark's join silently), reading
   * its build side through Quiver's cache if `throughQuiver`, through its own read if not.
   */
  def requireNativeJoin(query: DataFrame, throughQuiver: Boolean = false): Unit = {
    val plan = query.queryExecution.executedPlan
    val nodes = plan.collect { case node: SparkPlan => node.getClass.getSimpleName }
    if (!nodes.contains("CometBroadcastHashJoinExec") || nodes.contains("BroadcastHashJoinExec")) {
      throw new IllegalStateException(s"Comet did not run the join natively:\n$plan")
    }
    val exchange =
      if (throughQuiver) "QuiverCometBroadcastExchangeExec" else "CometBroadcastExchangeExec"
    if (!nodes.contains(exchange)) {
      throw new IllegalStateException(s"Comet's join read its build side without $exchange:\n$plan")
    }
  }

  private def hasClass(name: String): Boolean =
    try {
      Class.forName(name, false, getClass.getClassLoader)
      true
    } catch {
      case _: ClassNotFoundException => false
    }
}
