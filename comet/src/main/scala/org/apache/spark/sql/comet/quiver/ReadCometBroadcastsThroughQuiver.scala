package org.apache.spark.sql.comet.quiver

import java.util.concurrent.ConcurrentHashMap

import dev.quiver.annotation.Internal
import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.comet.CometBroadcastExchangeExec
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan, SQLExecution}
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec
import org.apache.spark.sql.internal.StaticSQLConf

/**
 * Replaces each of Comet's broadcast exchanges in a physical plan with Quiver's, after Comet's own
 * rules have placed them (Comet places them before Spark's columnar transitions, in AQE's stage
 * preparation too; this runs after them, also on each query stage AQE makes). Where Quiver is
 * turned off for Comet, the plan keeps Comet's exchanges, and the reason is logged once per query.
 */
final private[quiver] case class ReadCometBroadcastsThroughQuiver(session: SparkSession)
    extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan =
    ReadCometBroadcastsThroughQuiver.fallbackReason(session) match {
      case Some(reason) =>
        if (plan.exists(ReadCometBroadcastsThroughQuiver.isCometOwn)) {
          ReadCometBroadcastsThroughQuiver.logFallbackOnce(session, reason)
        }
        plan
      case None => ReadCometBroadcastsThroughQuiver.swapped(plan)
    }
}

/** Internal: reached from `dev.quiver.comet.QuiverCometExtensions` only. */
@Internal
object ReadCometBroadcastsThroughQuiver extends Logging {

  /** Quiver's setting that turns the adapter off without removing the extension. */
  val EnabledKey = "spark.quiver.comet.broadcast.enabled"

  /** The columnar rule the extension injects: all of its work after the transitions. */
  final case class Columnar(session: SparkSession) extends ColumnarRule {

    override def postColumnarTransitions: Rule[SparkPlan] =
      ReadCometBroadcastsThroughQuiver(session)
  }

  /** The classes the active SparkContext's `spark.sql.extensions` lists, in order. */
  def listedExtensions: Seq[String] =
    SparkContext.getActive
      .map(_.getConf.get(StaticSQLConf.SPARK_SESSION_EXTENSIONS.key, ""))
      .getOrElse("")
      .split(",")
      .map(_.trim)
      .filter(_.nonEmpty)
      .toSeq

  /** Queries whose fallback was logged: a bounded record, oldest forgotten first. */
  private val loggedQueries = ConcurrentHashMap.newKeySet[String]()
  private val MaxLoggedQueries = 1024

  private[quiver] def isCometOwn(plan: SparkPlan): Boolean = plan match {
    case _: QuiverCometBroadcastExchangeExec => false
    case _: CometBroadcastExchangeExec => true
    case _ => false
  }

  private[quiver] def throughQuiver(
      exchange: CometBroadcastExchangeExec
  ): QuiverCometBroadcastExchangeExec = {
    val quiver = new QuiverCometBroadcastExchangeExec(
      exchange.originalPlan,
      exchange.output,
      exchange.mode,
      exchange.child
    )
    quiver.copyTagsFrom(exchange)
    quiver
  }

  /**
   * `plan` with Comet's broadcast exchanges replaced. Not `transformUp`: it keeps a parent whose
   * rewritten children are equal to its old ones, and Comet's operators are equal whatever their
   * children's kind (they compare their own fields), so the replacement would be lost. A parent is
   * copied here whenever a child is no longer the same object.
   */
  private[quiver] def swapped(plan: SparkPlan): SparkPlan = plan match {
    case exchange: CometBroadcastExchangeExec if isCometOwn(exchange) => throughQuiver(exchange)
    case ReusedExchangeExec(output, exchange: CometBroadcastExchangeExec) if isCometOwn(exchange) =>
      ReusedExchangeExec(output, throughQuiver(exchange))
    case parent if parent.children.isEmpty => parent
    case parent =>
      val children = parent.children.map(swapped)
      if (parent.children.zip(children).forall { case (before, after) => before eq after }) parent
      else parent.withNewChildren(children)
  }

  /** Why this session's Comet broadcasts keep Comet's own read, if they do. */
  private[quiver] def fallbackReason(session: SparkSession): Option[String] =
    if (session.conf.get(EnabledKey, "true").trim.equalsIgnoreCase("false"))
      Some(s"$EnabledKey is false")
    else None

  private def logFallbackOnce(session: SparkSession, reason: String): Unit = {
    val query = Option(session.sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY))
    val first = query.forall { id =>
      if (loggedQueries.size >= MaxLoggedQueries) loggedQueries.clear()
      loggedQueries.add(id)
    }
    if (first) {
      logInfo(
        s"Comet's broadcasts in query ${query.getOrElse("(not yet running)")} keep Comet's own " +
          s"read, not Quiver's cache: $reason"
      )
    }
  }
}
