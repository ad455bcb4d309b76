package org.apache.spark.sql.quiver.cluster

import java.nio.file.Paths

/**
 * The one standalone cluster of a test JVM: started by the first cluster suite, shared by the
 * others (each runs its own application on it), stopped when the JVM exits.
 */
object SharedCluster {

  /** Two executors of two cores: four task slots, two JVMs. */
  val Executors = 2
  val CoresPerExecutor = 2

  lazy val cluster: StandaloneCluster = {
    val folder = Paths.get(sys.props("java.io.tmpdir"), "quiver-clusters")
    val started = StandaloneCluster.start(
      folder.resolve(s"${ProcessHandle.current().pid()}-home"),
      workerCores = Executors * CoresPerExecutor,
      workerMemory = "2g"
    )
    sys.addShutdownHook(started.stop())
    started
  }
}
