package dev.quiver.broadcast;

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
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One stream's shared dictionaries seen as vectors of another allocator, as a view sees a shared
 * batch: each vector holds references on the shared dictionary's buffers (same memory, no value
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
   * @param seen how the views see a shared dictionary's buffers: the batch it is given (which holds
   *     references of its own on them), or one of its own that the views close after loading
   */
  DictionaryViews(
      DictionaryProvider shared, BufferAllocator allocator, UnaryOperator<ArrowRecordBatch> seen) {
    try {
      for (long id : shared.getDictionaryIds()) {
        Dictionary dictionary = shared.lookup(id);
        FieldVector view = dictionary.getVector().getField().createVector(allocator);
        vectors.add(view);
        load(view, dictionary.getVector(), seen);
        views.put(new Dictionary(view, dictionary.getEncoding()));
      }
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  /** Loads {@code view} from {@code shared}'s buffers, taking its own references on them. */
  private static void load(
      FieldVector view, FieldVector shared, UnaryOperator<ArrowRecordBatch> seen) {
    // Neither root is closed: one would close the shared vector, the other the view.
    VectorSchemaRoot sharedRoot = single(shared, shared.getValueCount());
    try (ArrowRecordBatch unloaded = new VectorUnloader(sharedRoot).getRecordBatch()) {
      ArrowRecordBatch batch = seen.apply(unloaded);
      try {
        new VectorLoader(single(view, 0)).load(batch);
      } finally {
        if (batch != unloaded) {
          batch.close();
        }
      }
    }
  }

  private static VectorSchemaRoot single(FieldVector vector, int rows) {
    return new VectorSchemaRoot(
        Collections.singletonList(vector.getField()), Collections.singletonList(vector), rows);
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
