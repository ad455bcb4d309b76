package org.apache.spark.sql.quiver.broadcast

import dev.quiver.broadcast.{MemoryLocation, StorageMemory}
import org.apache.spark.SparkConf
import org.apache.spark.internal.config
import org.apache.spark.memory.{MemoryManager, MemoryMode}
import org.apache.spark.storage.BroadcastBlockId

/**
 * Spark's storage memory as the pool of Quiver's retained broadcasts. Heap bytes go in the on-heap
 * pool. Arrow's buffers and native memory are off the heap, so they go in the off-heap pool when
 * `spark.memory.offHeap.enabled`; otherwise in the on-heap pool, where they are counted though they
 * live outside it: Spark has no other pool a decoded broadcast could be visible and bounded in.
 *
 * Bytes are taken only if they are free now, under the memory manager's own lock: Spark's
 * `acquireStorageMemory` would otherwise evict cached blocks to make room, and a retained broadcast
 * is worth less than Spark's cached data.
 *
 * @param offHeapMode the pool of off-heap bytes (see [[SparkStorageMemory.memoryMode]])
 */
private[quiver] class SparkStorageMemory(memoryManager: MemoryManager, offHeapMode: MemoryMode)
    extends StorageMemory {

  override def tryAcquire(broadcastId: Long, bytes: Long, location: MemoryLocation): Boolean = {
    val mode = modeOf(location)
    memoryManager.synchronized {
      bytes <= free(mode) &&
      memoryManager.acquireStorageMemory(blockId(broadcastId), bytes, mode)
    }
  }

  override def release(broadcastId: Long, bytes: Long, location: MemoryLocation): Unit =
    memoryManager.releaseStorageMemory(bytes, modeOf(location))

  /** Less than a tenth of a pool Quiver uses free: Spark is about to evict to make room. */
  override def underPressure(): Boolean = memoryManager.synchronized {
    pressed(MemoryMode.ON_HEAP) || (offHeapMode == MemoryMode.OFF_HEAP && pressed(offHeapMode))
  }

  private def modeOf(location: MemoryLocation): MemoryMode = location match {
    case MemoryLocation.JVM_HEAP => MemoryMode.ON_HEAP
    case _ => offHeapMode
  }

  private def pressed(mode: MemoryMode): Boolean =
    free(mode) < max(mode) / SparkStorageMemory.PressureDivisor

  /** Storage memory free now, counting what storage may borrow from idle execution memory. */
  private def free(mode: MemoryMode): Long = max(mode) - used(mode)

  private def max(mode: MemoryMode): Long = mode match {
    case MemoryMode.OFF_HEAP => memoryManager.maxOffHeapStorageMemory
    case _ => memoryManager.maxOnHeapStorageMemory
  }

  private def used(mode: MemoryMode): Long = mode match {
    case MemoryMode.OFF_HEAP => memoryManager.offHeapStorageMemoryUsed
    case _ => memoryManager.onHeapStorageMemoryUsed
  }

  private def blockId(broadcastId: Long) = BroadcastBlockId(broadcastId, "quiver-decoded")
}

private[quiver] object SparkStorageMemory {

  /** Under pressure when less than 1 / this of the pool is free. */
  val PressureDivisor = 10

  /** The pool a configuration puts off-heap memory (Arrow's, native) in. */
  def memoryMode(conf: SparkConf): MemoryMode =
    if (conf.get(config.MEMORY_OFFHEAP_ENABLED)) MemoryMode.OFF_HEAP else MemoryMode.ON_HEAP
}
