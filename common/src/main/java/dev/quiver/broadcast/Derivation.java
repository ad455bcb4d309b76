package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;

/**
 * How to build one value from a decoded broadcast: say, a join's hash table over its build side.
 * The cache builds it once per entry and key and shares it as it shares the entry (see {@link
 * BroadcastReader#derived(Object, Derivation)}).
 */
@Public
@FunctionalInterface
public interface Derivation<T> {

  /**
   * Builds the value, on the calling task's thread.
   *
   * @param reader a fresh reader of its own over the decoded broadcast, at its start; the cache
   *     closes it after {@code build} returns, so the value must not keep its views, nor its {@link
   *     BroadcastReader#dictionaries()} (copy what it needs, or keep positions into the batches and
   *     the streams' own dictionaries, which stay as long as the value does). It cannot itself ask
   *     for a derived value.
   * @param allocator a child of the entry's allocator, for the Arrow memory the value keeps; its
   *     bytes count in the entry's (and in the limit on one entry's bytes). It is closed with the
   *     value, after {@link DerivedValue#close()}, so the value's release must free what the value
   *     allocated in it.
   * @throws IOException or any other exception: the build fails, and is not cached. It must free
   *     what it allocated in {@code allocator} before it throws (the cache closes the allocator,
   *     and an allocator still holding memory fails to close).
   */
  DerivedValue<T> build(BroadcastReader reader, BufferAllocator allocator) throws IOException;
}
