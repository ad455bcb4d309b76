package dev.quiver.broadcast;

import dev.quiver.annotation.Public;

/**
 * Where the bytes of a decoded broadcast or a derived value live. The cache counts them all in an
 * entry's bytes, and a {@link StorageMemory} accounts each in the pool where it belongs.
 */
@Public
public enum MemoryLocation {
  /** Objects on the JVM's heap (say, a hash table of Java arrays). */
  JVM_HEAP,
  /** Arrow buffers: off-heap, allocated from the entry's Arrow allocator, which measures them. */
  ARROW,
  /** Memory outside the JVM's allocators (say, an engine's native hash table). */
  NATIVE
}
