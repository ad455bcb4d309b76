package org.apache.spark.sql.comet.quiverbench

import dev.quiver.bench.{ReadPathBench, TaskMetricsListener}
import dev.quiver.spark.QuiverSettings
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.quiver.bench.ListenerBus

/**
 * Comet's read path and Comet on Quiver's, side by side in one SparkContext for many rounds: a
 * finer measure of their per-task cost at a small broadcast than the main job's few rounds, and a
 * steady load to profile. Arguments: the dim table's Parquet folder, rounds, tasks, and which
 * readers (both, comet, quiver).
 */
object CometReadProfile {

  def main(args: Array[String]): Unit = {
    val dimPath = args(0)
    val rounds = args.lift(1).fold(200)(_.toInt)
    val tasks = args.lift(2).fold(50)(_.toInt)
    val which = args.lift(3).getOrElse("both")
    val spark = SparkSession
      .builder()
      .master("local[8]")
      .appName("comet-read-profile")
      .config("spark.plugins", QuiverSettings.Plugin)
      .config(QuiverSettings.RetainDecodedBroadcasts, "true")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val sc = spark.sparkContext
    val listener = new TaskMetricsListener
    sc.addSparkListener(listener)
    try {
      val broadcast = ArrowBroadcast.of(spark.read.parquet(dimPath))
      val streams = broadcast.value.value
      println(s"streams: ${streams.length}, rows: ${broadcast.rows}")
      val all = Seq(
        "Comet on" -> new CometBroadcastReader().rdd(sc, streams, tasks, shareDecoded = true),
        "Comet on Quiver" -> new CometOnQuiverReader().rdd(sc, streams, tasks, shareDecoded = true)
      )
      val readers = which match {
        case "comet" => all.take(1)
        case "quiver" => all.drop(1)
        case _ => all
      }
      val cpu = readers.map(_._1 -> Array.newBuilder[Long]).toMap
      (1 to rounds).foreach { round =>
        readers.indices.map(i => readers((i + round) % readers.size)).foreach { case (name, rdd) =>
          listener.clear()
          ReadPathBench.consume(rdd)
          ListenerBus.drain(sc)
          cpu(name) += listener.finished.map(_.cpuNanos).sum
        }
      }
      val medians = cpu.map { case (name, runs) =>
        val sorted = runs.result().sorted
        name -> sorted(sorted.length / 2)
      }
      medians.foreach { case (name, nanos) =>
        println(
          f"$name%-16s tasks' CPU median ${nanos / 1e6}%.2f ms (${nanos / tasks / 1e3}%.1f us/task)"
        )
      }
      if (medians.size == 2) {
        println(
          f"ratio Comet on Quiver / Comet on: ${medians("Comet on Quiver").toDouble / medians("Comet on")}%.3f"
        )
      }
      broadcast.value.destroy()
    } finally spark.stop()
  }
}
