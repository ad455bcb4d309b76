package org.apache.spark.sql.quiver.shuffle

import dev.quiver.shuffle.RawBlockIterator
import dev.quiver.spark.shuffle.RawShuffleBlock

/**
 * The raw-block path of one reduce task: the blocks of every map output in turn, bodies still
 * compressed. A block's body is valid until `hasNext` is called again. Spark's records-read
 * metric counts blocks. Every block must declare `fieldCount` fields, the exchange schema's.
 */
final private[quiver] class RawBlocks(task: ReduceTask, fieldCount: Int)
    extends Iterator[RawShuffleBlock] {

  private val iterators =
    new MapOutputs[RawBlockIterator](task, task.openRawBlocks(_, fieldCount), _.next())

  private var ready: RawShuffleBlock = _

  override def hasNext: Boolean = {
    if (ready == null && iterators.next()) {
      val blocks = iterators.current
      ready = new RawShuffleBlock(
        blocks.codec(),
        blocks.fieldCount(),
        blocks.body(),
        blocks.blockIndex()
      )
      task.countRecords(1)
    }
    ready != null
  }

  override def next(): RawShuffleBlock = {
    if (!hasNext) throw new NoSuchElementException("no more shuffle blocks")
    val block = ready
    ready = null
    block
  }
}
