package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Turns a {@link BroadcastSource}'s streams into the form tasks share: Arrow IPC batches ({@link
 * #arrowIpc()}), the streams as they are, for an engine that builds its own structure from them
 * ({@link #keepSource()}), or an engine's own. The cache's sharing, retention, accounting,
 * liveness, kill handling and derived values are the same for every decoder.
 *
 * <p>The cache calls it with no lock held, on the thread of the task that decodes. An
 * implementation must be thread-safe, and must leave nothing allocated in {@code allocator} when it
 * throws.
 *
 * @param <D> the decoded form
 */
@Public
@FunctionalInterface
public interface BroadcastDecoder<D extends DecodedForm> {

  /**
   * Decodes the broadcast.
   *
   * @param allocator a child of the cache's allocator that the entry owns, for the Arrow memory the
   *     form keeps; bounded by the cache's limit on one entry's bytes
   */
  D decode(BroadcastSource source, BufferAllocator allocator) throws IOException;

  /**
   * Names the form this decoder makes: the cache keeps one entry per broadcast and name, so two
   * decoders of one name must make the same form. By default the class's name; override it when
   * instances of one class decode differently.
   */
  default String name() {
    return getClass().getName();
  }

  /** Decodes every stream as a strictly checked Arrow IPC stream, in order. */
  static BroadcastDecoder<DecodedBroadcast> arrowIpc() {
    return ArrowIpcDecoder.INSTANCE;
  }

  /**
   * Decodes nothing: the form is the source itself ({@link KeptSource}), its streams read on
   * demand, for an engine that derives its own structure straight from the compressed streams (see
   * {@link BroadcastReader#derived(Object, Derivation)}). Its bytes are those of Spark's own copy
   * of the broadcast, which Spark accounts: the form states none.
   */
  static BroadcastDecoder<KeptSource> keepSource() {
    return KeptSource.DECODER;
  }
}
