package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.Optional;

/**
 * What a {@link BroadcastDecoder} made of a broadcast: the value the cache shares between tasks,
 * retains and frees. Its Arrow memory is measured by the allocator it was decoded into; what it
 * keeps elsewhere it states here, so that the cache can count it and account it in the right
 * storage memory.
 *
 * <p>The cache closes it exactly once, when its entry goes (never while a task or a {@link
 * BroadcastHold} holds the entry).
 */
@Public
public interface DecodedForm extends AutoCloseable {

  /** Bytes it keeps on the JVM's heap, beyond its allocator's; an estimate is fine. */
  default long heapBytes() {
    return 0;
  }

  /** Bytes it keeps outside the JVM's allocators (native memory); an estimate is fine. */
  default long nativeBytes() {
    return 0;
  }

  /**
   * Why tasks may not share it, if they may not: the task that decoded it then keeps it for itself,
   * and the others decode for themselves.
   */
  default Optional<String> whyNotShared() {
    return Optional.empty();
  }

  /** Frees what it holds; called once. */
  @Override
  void close();
}
