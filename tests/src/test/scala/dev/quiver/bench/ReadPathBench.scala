package dev.quiver.bench

import dev.quiver.spark.QuiverMetrics
import dev.quiver.spark.broadcast.{ArrowBroadcast, ArrowBroadcastRDD}
import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.quiver.bench.ListenerBus
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The main job's read-path section: the broadcast `dim` table read as `ColumnarBatch`es by every
 * task of a stage (one partition per task, as a join's probe tasks read their build side), by
 * Quiver's `ArrowBroadcastRDD` and by a peer's reader (Comet 1.2.0's `CometBatchRDD`, where this
 * build has it) over the very same compressed bytes, each with its shared decoding off and on.
 * Every task runs the same consumer: it counts the rows and sums `d_long` through
 * `ColumnVector.getLong`. Per run it records the stage's summed task CPU (in nanoseconds, after
 * the listener bus drained), the wall time and the decodes the reader did.
 */
object ReadPathBench {

  /** Quiver with retention: run in its own SparkContext, as the join section's on+retain. */
  val Retained = "Quiver on+retain"

  /** One read of the broadcast by every task of a stage. */
  final case class ReadRun(
      shape: Shape,
      setting: String,
      round: Int,
      wallMillis: Long,
      cpuNanos: Long,
      decodes: Long,
      rows: Long,
      sum: Long
  ) extends ReportText.ShapeRun

  /** The settings of a session, side by side: the peer's, if this build has it, and Quiver's. */
  def settings(peer: Option[PeerBroadcastReader], retain: Boolean): Seq[String] =
    if (retain) Seq(Retained) ++ peer.flatMap(_ => PeerBroadcastReader.cometOnQuiver()).map(_.name)
    else
      peer.toSeq.flatMap(p => Seq(s"${p.name} off", s"${p.name} on")) ++
        Seq("Quiver off", "Quiver on")

  /**
   * Runs `options`' warm-up and measured rounds of `settings` (rotating their order every round)
   * in `spark`, reading `dim` broadcast once per session and setting, and checks that every read
   * gave the same rows and sum.
   */
  def run(
      spark: SparkSession,
      shape: Shape,
      dimPath: String,
      peer: Option[PeerBroadcastReader],
      settings: Seq[String],
      options: BenchOptions,
      listener: TaskMetricsListener,
      log: String => Unit
  ): Seq[ReadRun] = {
    val sc = spark.sparkContext
    val broadcast = ArrowBroadcast.of(spark.read.parquet(dimPath))
    val streams = broadcast.value.value
    val onQuiver = PeerBroadcastReader.cometOnQuiver().filter(r => settings.contains(r.name))
    val readers: Map[String, RDD[ColumnarBatch]] = settings.map { setting =>
      val share = !setting.endsWith(" off")
      setting -> (peer.filter(ofPeer(_, setting)) ++ onQuiver.filter(_.name == setting)).headOption
        .fold[RDD[ColumnarBatch]](
          new ArrowBroadcastRDD(sc, broadcast.value, shape.probeTasks, share)
        )(
          _.rdd(sc, streams, shape.probeTasks, share)
        )
    }.toMap
    try {
      val total = options.warmups + options.rounds
      (1 to total).flatMap { round =>
        val measured = round > options.warmups
        val order = settings.indices.map(i => settings((i + round) % settings.size))
        val runs = order.map { setting =>
          log(s"${shape.name}: read path, round $round/$total, $setting")
          readOnce(shape, setting, round - options.warmups, readers(setting), peer, listener, sc)
        }
        val distinct = runs.map(r => (r.rows, r.sum)).distinct
        if (distinct.size != 1 || runs.head.rows != shape.probeTasks.toLong * broadcast.rows) {
          throw new IllegalStateException(
            s"${shape.name}: the readers disagree: " +
              runs.map(r => s"${r.setting} ${r.rows} rows, sum ${r.sum}").mkString("; ")
          )
        }
        if (measured) runs else Seq.empty
      }
    } finally broadcast.value.destroy()
  }

  private def readOnce(
      shape: Shape,
      setting: String,
      round: Int,
      rdd: RDD[ColumnarBatch],
      peer: Option[PeerBroadcastReader],
      listener: TaskMetricsListener,
      sc: SparkContext
  ): ReadRun = {
    def decodes: Long =
      if (peer.exists(ofPeer(_, setting))) peer.get.decodes
      else {
        val counters = QuiverMetrics.broadcastCache
        counters.decodes() + counters.privateDecodes()
      }
    val decodesBefore = decodes
    listener.clear()
    val start = System.nanoTime()
    val (rows, sum) = consume(rdd)
    val wall = (System.nanoTime() - start) / 1000000L
    ListenerBus.drain(sc)
    val tasks = listener.finished
    require(
      tasks.size == shape.probeTasks,
      s"expected ${shape.probeTasks} tasks, saw ${tasks.size}"
    )
    ReadRun(
      shape,
      setting,
      round,
      wall,
      tasks.map(_.cpuNanos).sum,
      decodes - decodesBefore,
      rows,
      sum
    )
  }

  /** Whether `setting` is one of `peer`'s own readers (its sharing off or on). */
  private def ofPeer(peer: PeerBroadcastReader, setting: String): Boolean =
    setting == s"${peer.name} off" || setting == s"${peer.name} on"

  /** Every task counts its rows and sums `d_long` (column 1) through `getLong`. */
  def consume(rdd: RDD[ColumnarBatch]): (Long, Long) =
    rdd
      .mapPartitions { batches =>
        var rows = 0L
        var sum = 0L
        batches.foreach { batch =>
          val column = batch.column(1)
          val n = batch.numRows()
          var i = 0
          while (i < n) {
            sum += column.getLong(i)
            i += 1
          }
          rows += n
        }
        Iterator.single((rows, sum))
      }
      .collect()
      .foldLeft((0L, 0L))((a, b) => (a._1 + b._1, a._2 + b._2))
}
