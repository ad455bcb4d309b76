package org.apache.spark.sql.quiver.shim

import java.util.ServiceLoader

import org.apache.spark.SPARK_VERSION

/**
 * Finds the [[SparkShim]] for the Spark on the classpath. Each per-release artifact carries one
 * shim, registered as a `java.util.ServiceLoader` provider.
 */
private[quiver] object SparkShims {

  /** Every Spark line some Quiver artifact supports, for the error message. */
  val SupportedLines: Seq[String] = Seq("3.4", "3.5", "4.0", "4.1")

  lazy val get: SparkShim = load(SPARK_VERSION, getClass.getClassLoader)

  /** The `major.minor` of a Spark version string such as `3.5.9` or `4.1.0-SNAPSHOT`. */
  def sparkLine(version: String): String = version.split("[.-]").take(2).mkString(".")

  /** The shim for `sparkVersion` among the providers `loader` sees. */
  def load(sparkVersion: String, loader: ClassLoader): SparkShim = {
    val line = sparkLine(sparkVersion)
    val found = Seq.newBuilder[SparkShim]
    val providers = ServiceLoader.load(classOf[SparkShim], loader).iterator()
    while (providers.hasNext) found += providers.next()
    val shims = found.result()
    shims.find(_.sparkLines.contains(line)).getOrElse {
      val onClasspath =
        if (shims.isEmpty) "no Quiver shim is on the classpath"
        else
          "the Quiver artifact on the classpath supports Spark " +
            shims.flatMap(_.sparkLines).mkString(", ")
      throw new UnsupportedOperationException(
        s"Quiver does not support Spark $sparkVersion: $onClasspath. Quiver supports Spark " +
          s"${SupportedLines.mkString(", ")}, one artifact per release line " +
          "(quiver-spark<line>_<scala version>); use the one built for your Spark."
      )
    }
  }
}
