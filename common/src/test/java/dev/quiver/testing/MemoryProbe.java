package dev.quiver.testing;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/**
 * Measures the memory a piece of code allocates outside Arrow: heap bytes allocated by this thread
 * and capacity of JDK direct buffers. Used to prove a hostile length is not allocated.
 */
public final class MemoryProbe {

  private MemoryProbe() {}

  /** Heap bytes this thread has allocated so far, or -1 if the JVM cannot tell. */
  public static long threadHeapAllocated() {
    java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    if (bean instanceof com.sun.management.ThreadMXBean) {
      com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
      if (threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled()) {
        return threads.getThreadAllocatedBytes(Thread.currentThread().getId());
      }
    }
    return -1;
  }

  /** Capacity of all live JDK direct buffers ({@code ByteBuffer.allocateDirect}). */
  public static long directBufferCapacity() {
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        return pool.getTotalCapacity();
      }
    }
    throw new IllegalStateException("no direct buffer pool");
  }
}
