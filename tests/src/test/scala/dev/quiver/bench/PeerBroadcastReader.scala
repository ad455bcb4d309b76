package dev.quiver.bench

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Another engine's reader of a broadcast of Spark-codec-compressed Arrow IPC streams: the peer the
 * read-path section measures Quiver's reader against, on the very same bytes.
 */
trait PeerBroadcastReader {

  /** The peer's name in the report ("Comet"). */
  def name: String

  /** Broadcasts `streams` the peer's way and reads them as `partitions` partitions of batches. */
  def rdd(
      sc: SparkContext,
      streams: Array[Array[Byte]],
      partitions: Int,
      shareDecoded: Boolean
  ): RDD[ColumnarBatch]

  /** How many decodes the RDDs this reader made have done so far. */
  def decodes: Long
}

object PeerBroadcastReader {

  /** Comet's reader, compiled only where Comet's jar is on the classpath (the Spark 4.1 build). */
  private val CometReader = "org.apache.spark.sql.comet.quiverbench.CometBroadcastReader"

  /** The read section's name of Comet on Quiver's reader. */
  val CometOnQuiver = "Comet on Quiver"

  private val CometOnQuiverReader = "org.apache.spark.sql.comet.quiverbench.CometOnQuiverReader"

  /** Comet on Quiver's reader (the adapter's), where this build has Comet. */
  def cometOnQuiver(): Option[PeerBroadcastReader] = load(CometOnQuiverReader).toOption

  /** Comet 1.2.0's reader, or why this build cannot run it. */
  def comet(): Either[String, PeerBroadcastReader] = load(CometReader)

  private def load(className: String): Either[String, PeerBroadcastReader] =
    try
      Right(
        Class
          .forName(className)
          .getDeclaredConstructor()
          .newInstance()
          .asInstanceOf[PeerBroadcastReader]
      )
    catch {
      case _: ClassNotFoundException =>
        Left(
          "Comet 1.2.0 is a dependency of the Spark 4.1 build only (its jar is built for that " +
            "line), so this build's read-path section runs Quiver alone"
        )
    }
}
