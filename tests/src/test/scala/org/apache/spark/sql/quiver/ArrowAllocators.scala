package org.apache.spark.sql.quiver

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.scalatest.Assertions

/** The suites' Arrow allocators: a fresh one per test body, checked to be at zero bytes after it. */
object ArrowAllocators {

  def withAllocator(body: BufferAllocator => Unit): Unit = {
    val allocator = new RootAllocator()
    try {
      body(allocator)
      Assertions.assert(allocator.getAllocatedMemory == 0, "the test left Arrow memory allocated")
    } finally allocator.close()
  }
}
