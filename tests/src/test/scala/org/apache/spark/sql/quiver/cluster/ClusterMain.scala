package org.apache.spark.sql.quiver.cluster

import java.nio.file.Paths

/**
 * `dev/cluster`: a standalone cluster for a developer, in the foreground until stopped (Ctrl-C,
 * or `dev/cluster stop`, which signals this JVM by the process id it records); its master and
 * worker stop with it. Arguments: `[--cores N] [--memory SIZE]` for the worker.
 */
object ClusterMain {

  def main(args: Array[String]): Unit = {
    val options = args
      .grouped(2)
      .map {
        case Array(name, value) if name == "--cores" || name == "--memory" => name -> value
        case other =>
          throw new IllegalArgumentException(s"unknown arguments: ${other.mkString(" ")}")
      }
      .toMap
    val cores = options.get("--cores").fold(4)(_.toInt)
    val memory = options.getOrElse("--memory", "4g")
    val folder = Paths.get("target", "cluster").toAbsolutePath
    val self = ProcessHandle.current().pid()
    val cluster = StandaloneCluster.start(folder.resolve(s"$self-home"), cores, memory)
    sys.addShutdownHook(cluster.stop())
    println(s"""Spark standalone cluster: ${cluster.masterUrl}
      |  worker: $cores cores, $memory; pids: this JVM $self, worker and master ${cluster.pids
        .mkString(", ")}
      |  logs: ${cluster.home}
      |  run the main job on it: dev/bench --master ${cluster.masterUrl}
      |  an application of your own also needs the executors' class path:
      |    --conf spark.executor.extraClassPath=${StandaloneCluster.classDirectories.mkString(":")}
      |Stop it with Ctrl-C or dev/cluster stop.""".stripMargin)
    Thread.currentThread().join()
  }
}
