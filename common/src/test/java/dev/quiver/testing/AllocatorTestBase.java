package dev.quiver.testing;

import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test class whose every test has an allocator of its own in {@link #allocator}, given and
 * checked at zero after the test by {@link AllocatorExtension}.
 */
@ExtendWith(AllocatorExtension.class)
public abstract class AllocatorTestBase {

  /** The running test's allocator. */
  protected BufferAllocator allocator;

  @BeforeEach
  protected final void takeTheTestsAllocator(BufferAllocator allocator) {
    this.allocator = allocator;
  }
}
