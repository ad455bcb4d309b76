package org.apache.spark.storage

import java.io.InputStream

/**
 * What Spark's shuffle fetcher hands its reader is the serializer manager's stream behind a
 * `BufferReleasingInputStream` of Spark's own (Spark 3.4 to 4.2), which passes on heap reads only.
 * This reaches the stream behind it, so that a reader can give that stream a direct buffer to fill.
 */
private[spark] object FetchedStreams {

  /** The stream `in` wraps if it is Spark's fetcher's wrapper; otherwise `in` itself. */
  def behindSparkWrapper(in: InputStream): InputStream = in match {
    case wrapper: BufferReleasingInputStream => wrapper.delegate
    case other => other
  }
}
