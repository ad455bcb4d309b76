package dev.quiver.broadcast;

import dev.quiver.ipc.DecodedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One stream's shared dictionaries seen as vectors of another allocator, as a view sees a shared
 * batch: each vector is loaded from the dictionary's shared batch ({@link
 * DecodedStream#dictionaryBatch(long)}) and holds references on its buffers (same memory, no value
 * copied), so its owner may close it, or transfer its buffers away, without touching the shared
 * dictionary or anyone else's view of it. Closing this releases what is left of those references.
 *
 * <p>A task's reader ({@link BroadcastReader#dictionaries()}) sees them in the entry's allocator; a
 * C Data export ({@link CDataExport}) sees them through buffers of its lease.
 */
final class DictionaryViews implements DictionaryProvider, AutoCloseable {

  private final DictionaryProvider.MapDictionaryProvider views =
      new DictionaryProvider.MapDictionaryProvider();
  private final List<FieldVector> vectors = new ArrayList<>();

  /**
   * Views of every dictionary of {@code shared} in {@code allocator}.
   *
   * @param seen how the views see a shared dictionary batch: as it is, or through a batch of its
   *     own, which the views close once loaded
   */
  DictionaryViews(
      DecodedStream shared, BufferAllocator allocator, UnaryOperator<ArrowRecordBatch> seen) {
    try {
      for (long id : shared.getDictionaryIds()) {
        Dictionary dictionary = shared.lookup(id);
        FieldVector view = dictionary.getVector().getField().createVector(allocator);
        vectors.add(view);
        load(view, shared.dictionaryBatch(id), seen);
        views.put(new Dictionary(view, dictionary.getEncoding()));
      }
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  private static void load(
      FieldVector view, ArrowRecordBatch shared, UnaryOperator<ArrowRecordBatch> seen) {
    ArrowRecordBatch batch = seen.apply(shared);
    try {
      // Not closed: it would close the view.
      VectorSchemaRoot one =
          new VectorSchemaRoot(
              Collections.singletonList(view.getField()), Collections.singletonList(view), 0);
      new VectorLoader(one).load(batch);
    } finally {
      if (batch != shared) {
        batch.close();
      }
    }
  }

  @Override
  public Dictionary lookup(long id) {
    return views.lookup(id);
  }

  @Override
  public Set<Long> getDictionaryIds() {
    return views.getDictionaryIds();
  }

  /** Releases the views' references (those their owner did not transfer away). Idempotent. */
  @Override
  public void close() {
    AutoCloseables.closeNoChecked(AutoCloseables.all(vectors));
    vectors.clear();
  }
}
