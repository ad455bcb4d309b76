package org.apache.spark.sql.quiver.shuffle

import dev.quiver.shuffle.RawBlockIterator
import dev.quiver.spark.shuffle.RawShuffleBlock

/**
 * The raw-block path of one reduce task: the blocks of every map output in turn, bodies still
 * compressed. A block's body is valid until `hasNext` is called again. Spark's records-read
 * metric counts blocks. Every block must declare `fieldCount` fields, the exchange schema's.
 */
final class RawBlocks(task: ReduceTask, fieldCount: Int) extends Iterator[RawShuffleBlock] {

  private var blocks: RawBlockIterator = _
  private var ready: RawShuffleBlock = _

  override def hasNext: Boolean = {
    while (ready == null && (blocks != null || task.hasNextStream)) {
      if (blocks == null) blocks = task.openRawBlocks(task.nextStream(), fieldCount)
      val start = System.nanoTime()
      val more = blocks.next()
      task.metrics.readTime.add(System.nanoTime() - start)
      if (more) {
        ready = new RawShuffleBlock(
          blocks.codec(),
          blocks.fieldCount(),
          blocks.body(),
          blocks.blockIndex()
        )
        task.metrics.blocksRead.add(1)
        task.countRecords(1)
      } else {
        blocks.close()
        blocks = null
      }
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
