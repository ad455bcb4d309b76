package org.apache.spark.sql.quiver.cluster

import java.io.File
import java.net.{InetAddress, InetSocketAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths, StandardOpenOption}
import java.util.concurrent.TimeUnit

import scala.util.Try

import dev.quiver.spark.QuiverSettings
import org.apache.spark.sql.SparkSession

/**
 * A Spark standalone cluster on loopback: Spark's own master and one worker, each a JVM of its
 * own started from this JVM's class path (no Spark distribution needed), and the executor JVMs the
 * worker launches for each application. The executors get the jars through a stand-in
 * `SPARK_HOME` whose `jars/` links every jar of the class path (Spark's launcher takes that folder
 * as the executor class path when `SPARK_HOME/RELEASE` exists), and the class directories
 * (Quiver's and the tests' own) through `spark.executor.extraClassPath`.
 *
 * Both JVMs are stopped by process id in [[stop]]; they also exit by themselves when the JVM that
 * started them does ([[ClusterProcess]]), and a later start kills any that a dead owner left.
 */
final class StandaloneCluster private (
    val home: Path,
    val masterUrl: String,
    master: Process,
    worker: Process,
    val workerCores: Int,
    pidFile: Path
) {

  /** The worker's and master's process ids. */
  def pids: Seq[Long] = Seq(worker.pid(), master.pid())

  /** A session builder for an application on this cluster, with Quiver's plugin. */
  def session(appName: String, executors: Int, coresPerExecutor: Int): SparkSession.Builder = {
    require(executors * coresPerExecutor <= workerCores, "more cores than the worker has")
    SparkSession
      .builder()
      .master(masterUrl)
      .appName(appName)
      .config("spark.driver.host", StandaloneCluster.Loopback)
      .config("spark.driver.bindAddress", StandaloneCluster.Loopback)
      .config("spark.executor.extraClassPath", StandaloneCluster.classDirectories.mkString(":"))
      .config("spark.executor.cores", coresPerExecutor.toString)
      .config("spark.cores.max", (executors * coresPerExecutor).toString)
      .config("spark.executor.memory", StandaloneCluster.ExecutorMemory)
      .config("spark.plugins", QuiverSettings.Plugin)
      .config("spark.ui.enabled", "false")
  }

  /** The executors' logs of every application so far (`work/<app>/<executor>/stderr`). */
  def executorLogs: Seq[Path] = {
    val work = home.resolve("work").toFile
    Option(work.listFiles()).toSeq.flatten
      .flatMap(app => Option(app.listFiles()).toSeq.flatten)
      .map(_.toPath.resolve("stderr"))
      .filter(Files.exists(_))
  }

  /** The last lines of the master's, the worker's and the executors' logs, for a failure message. */
  def logTails(lines: Int = 40): String =
    (Seq(home.resolve("master.log"), home.resolve("worker.log")) ++ executorLogs)
      .map(log => s"--- $log\n${StandaloneCluster.tail(log, lines)}")
      .mkString("\n")

  /** Stops the worker (which stops its executors) and the master, by process id. */
  def stop(): Unit = synchronized {
    val everyProcess = Seq(worker, master).flatMap(p => p.toHandle +: descendants(p))
    everyProcess.foreach(_.destroy())
    everyProcess.foreach { handle =>
      if (Try(handle.onExit().get(30, TimeUnit.SECONDS)).isFailure) handle.destroyForcibly()
    }
    Files.deleteIfExists(pidFile)
  }

  private def descendants(process: Process): Seq[ProcessHandle] = {
    val found = Seq.newBuilder[ProcessHandle]
    process.descendants().forEach(handle => found += handle)
    found.result()
  }
}

object StandaloneCluster {

  val Loopback = "127.0.0.1"
  val ExecutorMemory = "768m"
  private val DaemonHeap = "-Xmx384m"

  /** The class path's folders: Quiver's modules and the tests, for the executors. */
  def classDirectories: Seq[String] = classPath.filter(new File(_).isDirectory)

  private def classPath: Seq[String] =
    sys.props("java.class.path").split(File.pathSeparator).toSeq.filter(_.nonEmpty)

  /**
   * Starts a master and a worker of `workerCores` cores under `home` (made empty first), and
   * waits until the master listens. The worker registers with it on its own; an application waits
   * for its executors (see [[ClusterApps.awaitExecutors]]).
   */
  def start(home: Path, workerCores: Int, workerMemory: String): StandaloneCluster = {
    killOrphans(home.getParent)
    deleteRecursively(home)
    Files.createDirectories(home.resolve("jars"))
    Files.createFile(home.resolve("RELEASE"))
    classPath.filterNot(new File(_).isDirectory).zipWithIndex.foreach { case (jar, i) =>
      val file = Paths.get(jar)
      Files.createSymbolicLink(
        home.resolve("jars").resolve(s"$i-${file.getFileName}"),
        file.toAbsolutePath
      )
    }
    val port = freePort()
    val masterUrl = s"spark://$Loopback:$port"
    val master = launch(
      home,
      "master",
      "org.apache.spark.deploy.master.Master",
      Seq("--host", Loopback, "--port", port.toString, "--webui-port", "0")
    )
    val pidFile = home.getParent.resolve(s"${ProcessHandle.current().pid()}.pids")
    def recordPids(pids: Long*): Unit =
      Files.write(
        pidFile,
        pids.mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8),
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND
      )
    recordPids(master.pid())
    awaitListening(port, master, home.resolve("master.log"))
    val worker = launch(
      home,
      "worker",
      "org.apache.spark.deploy.worker.Worker",
      Seq(
        "--host",
        Loopback,
        "--webui-port",
        "0",
        "--cores",
        workerCores.toString,
        "--memory",
        workerMemory,
        "--work-dir",
        home.resolve("work").toString,
        masterUrl
      )
    )
    recordPids(worker.pid())
    new StandaloneCluster(home, masterUrl, master, worker, workerCores, pidFile)
  }

  private def launch(home: Path, name: String, mainClass: String, args: Seq[String]): Process = {
    val java = Paths.get(sys.props("java.home"), "bin", "java").toString
    val jvmFlags = sys.props.getOrElse("quiver.test.jvm.args", "").split("\\s+").filter(_.nonEmpty)
    val command = Seq(java, DaemonHeap) ++ jvmFlags ++ Seq(
      "-cp",
      sys.props("java.class.path"),
      ClusterProcess.getClass.getName.stripSuffix("$"),
      ProcessHandle.current().pid().toString,
      mainClass
    ) ++ args
    val builder = new ProcessBuilder(command: _*)
      .redirectErrorStream(true)
      .redirectOutput(home.resolve(s"$name.log").toFile)
    val env = builder.environment()
    env.put("SPARK_HOME", home.toString)
    env.put(
      "SPARK_SCALA_VERSION",
      scala.util.Properties.versionNumberString.split('.').take(2).mkString(".")
    )
    env.put("SPARK_LOCAL_IP", Loopback)
    env.remove("SPARK_CONF_DIR")
    builder.start()
  }

  /** A loopback port nobody listens on now. */
  private def freePort(): Int = {
    val socket = new ServerSocket(0, 1, InetAddress.getByName(Loopback))
    try socket.getLocalPort
    finally socket.close()
  }

  private def awaitListening(port: Int, process: Process, log: Path): Unit = {
    def listening: Boolean = Try {
      val socket = new Socket()
      try socket.connect(new InetSocketAddress(Loopback, port), 1000)
      finally socket.close()
    }.isSuccess
    def failure =
      s"the master listening on port $port (alive: ${process.isAlive}):\n${tail(log, 60)}"
    Eventually.await(120)(failure) {
      if (!process.isAlive) throw new IllegalStateException(s"the master exited: $failure")
      listening
    }
  }

  /**
   * Kills the cluster JVMs that test runs no longer alive left behind (their `<pid>.pids` files
   * under `folder`), if [[ClusterProcess]] did not already end them, and deletes their homes.
   * Clusters of running JVMs (another build at the same time) are left alone.
   */
  private def killOrphans(folder: Path): Unit = {
    Files.createDirectories(folder)
    def ownerGone(name: String, suffix: String): Boolean =
      name.endsWith(suffix) &&
        Try(name.stripSuffix(suffix).toLong).toOption.forall(!ProcessHandle.of(_).isPresent)
    val left = Option(folder.toFile.listFiles()).toSeq.flatten
    left.filter(file => ownerGone(file.getName, ".pids")).foreach { file =>
      new String(Files.readAllBytes(file.toPath), StandardCharsets.UTF_8).linesIterator
        .flatMap(line => Try(line.trim.toLong).toOption)
        .foreach(pid => ProcessHandle.of(pid).ifPresent(killIfClusterProcess))
      file.delete()
    }
    left.filter(file => ownerGone(file.getName, "-home")).foreach(f => deleteRecursively(f.toPath))
  }

  private def killIfClusterProcess(handle: ProcessHandle): Unit = {
    val command = handle.info().arguments().map[String](_.mkString(" ")).orElse("")
    if (command.contains(ClusterProcess.getClass.getName.stripSuffix("$"))) {
      handle.destroyForcibly()
    }
    ()
  }

  private def deleteRecursively(path: Path): Unit = {
    if (Files.isDirectory(path) && !Files.isSymbolicLink(path)) {
      Option(path.toFile.listFiles()).toSeq.flatten.foreach(f => deleteRecursively(f.toPath))
    }
    Files.deleteIfExists(path)
    ()
  }

  private[cluster] def tail(log: Path, lines: Int): String =
    if (!Files.exists(log)) "(no log)"
    else {
      val all = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).linesIterator.toSeq
      all.takeRight(lines).mkString("\n")
    }
}
