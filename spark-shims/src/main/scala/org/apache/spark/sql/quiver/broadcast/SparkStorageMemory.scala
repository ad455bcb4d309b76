package org.apache.spark.sql.quiver.broadcast

import dev.quiver.broadcast.StorageMemory
import org.apache.spark.SparkConf
import org.apache.spark.internal.config
import org.apache.spark.memory.{MemoryManager, MemoryMode}
import org.apache.spark.storage.BroadcastBlockId

/**
 * Spark's storage memory as the pool of Quiver's retained broadcasts: the off-heap pool when
 * `spark.memory.offHeap.enabled` (Arrow's buffers are off-heap, so that is where they belong),
 * otherwise the on-heap pool, where they are counted though they live in direct memory: Spark has
 * no other pool a decoded broadcast could be visible and bounded in.
 *
 * Bytes are taken only if they are free now, under the memory manager's own lock: Spark's
 * `acquireStorageMemory` would otherwise evict cached blocks to make room, and a retained broadcast
 * is worth less than Spark's cached data.
 */
private[quiver] class SparkStorageMemory(memoryManager: MemoryManager, mode: MemoryMode)
    extends StorageMemory {

  override def tryAcquire(broadcastId: Long, bytes: Long): Boolean = memoryManager.synchronized {
    bytes <= free && memoryManager.acquireStorageMemory(blockId(broadcastId), bytes, mode)
  }

  override def release(broadcastId: Long, bytes: Long): Unit =
    memoryManager.releaseStorageMemory(bytes, mode)

  /** Less than a tenth of the storage pool free: Spark is about to evict to make room. */
  override def underPressure(): Boolean = memoryManager.synchronized {
    free < max / SparkStorageMemory.PressureDivisor
  }

  /** Storage memory free now, counting what storage may borrow from idle execution memory. */
  private def free: Long = max - used

  private def max: Long = mode match {
    case MemoryMode.OFF_HEAP => memoryManager.maxOffHeapStorageMemory
    case _ => memoryManager.maxOnHeapStorageMemory
  }

  private def used: Long = mode match {
    case MemoryMode.OFF_HEAP => memoryManager.offHeapStorageMemoryUsed
    case _ => memoryManager.onHeapStorageMemoryUsed
  }

  private def blockId(broadcastId: Long) = BroadcastBlockId(broadcastId, "quiver-decoded")
}

private[quiver] object SparkStorageMemory {

  /** Under pressure when less than 1 / this of the pool is free. */
  val PressureDivisor = 10

  /** The pool a configuration puts Arrow's memory in. */
  def memoryMode(conf: SparkConf): MemoryMode =
    if (conf.get(config.MEMORY_OFFHEAP_ENABLED)) MemoryMode.OFF_HEAP else MemoryMode.ON_HEAP
}
