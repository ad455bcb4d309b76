package dev.quiver.spark.broadcast

import dev.quiver.annotation.Public
import dev.quiver.broadcast.BroadcastReader
import org.apache.spark.SparkContext
import org.apache.spark.sql.quiver.join.BroadcastReadFigures
import org.apache.spark.util.LongAccumulator

/**
 * What the tasks of one [[ArrowBroadcastRDD]] paid to open its broadcast: named accumulators,
 * registered on the driver when the RDD is made, to which each task adds its open once. Spark shows
 * each task's values in the stage page's task table (column "Accumulators") and in
 * `SparkListenerTaskEnd.taskInfo.accumulables`; on the driver, after a job, `value` is the sum over
 * its tasks that succeeded (a failed or killed task adds nothing).
 *
 * Each task's open counts in exactly one of `decoded`, `decodedPrivately`, `shared` and
 * `retained`, so they add up to the tasks that read; they are the per-task side of the executor's
 * `broadcast.decodes`, `broadcast.privateDecodes`, `broadcast.sharedReads` and
 * `broadcast.retainedReads` (see `docs/tuning.md`, "Metrics").
 *
 * @param decodeTime nanoseconds tasks spent decoding the broadcast
 * @param waitTime nanoseconds tasks spent waiting for another task's decode of it
 * @param decoded opens whose task decoded the broadcast for the tasks that overlap it
 * @param decodedPrivately opens whose task decoded it for itself alone: sharing off, a broadcast
 *   whose streams carry dictionaries, or after another task's shared decode failed
 * @param shared opens that read another running task's decode (having waited for it, if it was not
 *   done)
 * @param retained opens that read a decode the executor had retained, without decoding or waiting
 */
@Public
final class BroadcastReadMetrics private (
    val decodeTime: LongAccumulator,
    val waitTime: LongAccumulator,
    val decoded: LongAccumulator,
    val decodedPrivately: LongAccumulator,
    val shared: LongAccumulator,
    val retained: LongAccumulator
) extends Serializable {

  /** Every accumulator, in the order of the constructor. */
  def all: Seq[LongAccumulator] =
    Seq(decodeTime, waitTime, decoded, decodedPrivately, shared, retained)

  /** [[all]] for callers in Java: unmodifiable, in the order of the constructor. */
  def allAsJava: java.util.List[LongAccumulator] =
    java.util.Collections.unmodifiableList(
      java.util.Arrays.asList(decodeTime, waitTime, decoded, decodedPrivately, shared, retained)
    )

  /** Adds the figures of one task's open, in that task. */
  private[broadcast] def add(reader: BroadcastReader): Unit =
    BroadcastReadFigures.add(reader, all)(_.add(_))
}

object BroadcastReadMetrics {

  /** New accumulators, registered with `sc` under the names Spark's UI shows. */
  private[broadcast] def apply(sc: SparkContext): BroadcastReadMetrics =
    new BroadcastReadMetrics(
      sc.longAccumulator("quiver broadcast decode time (ns)"),
      sc.longAccumulator("quiver broadcast wait time (ns)"),
      sc.longAccumulator("quiver broadcast reads decoded"),
      sc.longAccumulator("quiver broadcast reads decoded privately"),
      sc.longAccumulator("quiver broadcast reads shared"),
      sc.longAccumulator("quiver broadcast reads retained")
    )
}
