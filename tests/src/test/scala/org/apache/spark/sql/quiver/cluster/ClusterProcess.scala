package org.apache.spark.sql.quiver.cluster

/**
 * The main of a cluster JVM (Spark's standalone master or worker): runs the real main, and exits
 * when the JVM that started it does, so that no cluster outlives a test run or a `dev/cluster`
 * that was killed without a chance to stop it. A worker that exits this way stops its executors
 * (Spark's shutdown hook in the worker kills them).
 *
 * Arguments: the process id to outlive no longer, the main class, then that class's arguments.
 */
object ClusterProcess {

  /** The exit status when the starting JVM went away. */
  val OrphanedExit = 3

  def main(args: Array[String]): Unit = {
    require(args.length >= 2, "usage: ClusterProcess <owner pid> <main class> [args...]")
    val owner = java.lang.ProcessHandle.of(args(0).toLong)
    val watch = new Thread(
      () => {
        owner.ifPresent(handle => handle.onExit().join())
        System.exit(OrphanedExit)
      },
      "quiver-cluster-owner-watch"
    )
    watch.setDaemon(true)
    watch.start()
    val main = Class.forName(args(1)).getMethod("main", classOf[Array[String]])
    main.invoke(null, args.drop(2))
  }
}
