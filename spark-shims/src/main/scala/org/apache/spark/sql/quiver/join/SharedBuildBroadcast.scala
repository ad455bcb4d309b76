package org.apache.spark.sql.quiver.join

import dev.quiver.broadcast.{BroadcastReader, DerivedValue}
import dev.quiver.task.TaskScope
import org.apache.arrow.memory.BufferAllocator
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.sql.quiver.shim.SparkShims

/**
 * What Spark's broadcast join reads as its build side's broadcast: in each task, `value` is the
 * executor's one build side of `derivation`, derived from the decoded `source` broadcast through
 * Quiver's cache (built by the first task that asks, reused by the others, and kept as long as the
 * decoded broadcast is). Spark's join takes a read-only copy of it per task, as it does of its own
 * broadcast relation.
 *
 * The task reading `value` holds the cache entry, and so the build side, until it completes. This
 * wrapper owns nothing: `source` is the caller's, and unpersisting or destroying it is theirs.
 */
final private[quiver] class SharedBuildBroadcast(
    source: Broadcast[Array[Array[Byte]]],
    derivation: BuildSideDerivation,
    shareDecoded: Boolean,
    metrics: SharedBuildBroadcast.Metrics
) extends Broadcast[AnyRef](source.id) {

  override protected def getValue(): AnyRef = {
    val context = TaskContext.get()
    if (context != null) read(SparkShims.get.taskScope(context)) else onDriver
  }

  /**
   * Spark's join reads the value on the driver too, while it generates its code: its class and
   * whether its keys are unique, which must be those of the tasks' value. So the driver builds it
   * as well, through the same cache (in local mode, where the driver is the executor, the tasks
   * then reuse it if retention keeps it), and lets go of it at once: the driver reads only what
   * outlives the build side's memory.
   */
  @transient private lazy val onDriver: AnyRef = {
    val scope = new DriverReadScope
    try read(scope)
    finally scope.complete()
  }

  private def read(task: TaskScope): AnyRef = {
    val reader = ColumnarBatches.open(source, task, shareDecoded)
    var builtHere = false
    val value = reader.derived(
      derivation.key,
      (buildReader: BroadcastReader, _: BufferAllocator) => {
        builtHere = true
        val start = System.nanoTime()
        val built: DerivedValue[AnyRef] = derivation.build(buildReader)
        metrics.buildTime.add((System.nanoTime() - start) / 1000000L)
        built
      }
    )
    (if (builtHere) metrics.built else metrics.reused).add(1)
    // After the derive: a wait for another task's build counts in the read's wait.
    metrics.reads.add(reader)
    value
  }

  override protected def doUnpersist(blocking: Boolean): Unit = ()

  override protected def doDestroy(blocking: Boolean): Unit = ()

  override def toString: String = s"SharedBuildBroadcast(${source.id})"
}

private[quiver] object SharedBuildBroadcast {

  /** SQL metrics of the plan node, added to by the tasks that read the build side. */
  final case class Metrics(
      buildTime: SQLMetric,
      built: SQLMetric,
      reused: SQLMetric,
      reads: BroadcastReadSqlMetrics
  )
}
