package org.apache.spark.sql.quiver.shuffle

import java.io.{Closeable, InputStream}

/**
 * The one loop over a reduce task's map outputs, shared by the decoding and raw-block paths: one
 * reader per map output, opened when the previous one has ended and closed as soon as it does
 * (each reader holds Spark's stream and its decompression buffers). Counts read time and blocks
 * read; the caller counts records, which differ by path.
 *
 * @param open the reader of one map output's stream (the decoder or the raw-block iterator)
 * @param advance moves a reader to its next block; false at the end of its stream
 */
final private[quiver] class MapOutputs[R <: Closeable](
    task: ReduceTask,
    open: InputStream => R,
    advance: R => Boolean
) {

  private var reader: R = _

  /**
   * Moves to the next block of the current map output, or of the next ones; false at the end of
   * the partition. The block is [[current]]'s.
   */
  def next(): Boolean = {
    var found = false
    while (!found && (reader != null || task.hasNextStream)) {
      if (reader == null) reader = open(task.nextStream())
      val start = System.nanoTime()
      found = advance(reader)
      task.metrics.readTime.add(System.nanoTime() - start)
      if (found) task.metrics.blocksRead.add(1)
      else {
        reader.close()
        reader = null.asInstanceOf[R]
      }
    }
    found
  }

  /** The reader whose current block [[next]] moved to. */
  def current: R = reader
}
