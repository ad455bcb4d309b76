package dev.quiver.ipc;

import dev.quiver.annotation.Public;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One decoded Arrow IPC stream: its schema, its record batches and its dictionaries, all in buffers
 * owned by the allocator it was decoded into. Closing it releases this object's references on those
 * buffers; vectors loaded from its batches hold references of their own.
 */
@Public
public final class DecodedStream implements DictionaryProvider, AutoCloseable {

  private final Schema schema;
  private final List<ArrowRecordBatch> batches;
  private final Map<Long, Dictionary> dictionaries;
  // Each dictionary's buffers as a batch of one column, unloaded once here, so that views of it
  // are loaded as views of record batches are, never touching the shared vector.
  private final Map<Long, ArrowRecordBatch> dictionaryBatches;
  private final long rowCount;

  DecodedStream(Schema schema, List<ArrowRecordBatch> batches, Map<Long, Dictionary> dictionaries) {
    this.schema = schema;
    this.batches = Collections.unmodifiableList(new ArrayList<>(batches));
    this.dictionaries = Collections.unmodifiableMap(dictionaries);
    Map<Long, ArrowRecordBatch> unloaded = new HashMap<>();
    for (Map.Entry<Long, Dictionary> dictionary : dictionaries.entrySet()) {
      FieldVector values = dictionary.getValue().getVector();
      VectorSchemaRoot one =
          new VectorSchemaRoot(
              Collections.singletonList(values.getField()),
              Collections.singletonList(values),
              values.getValueCount());
      unloaded.put(dictionary.getKey(), new VectorUnloader(one).getRecordBatch());
    }
    this.dictionaryBatches = Collections.unmodifiableMap(unloaded);
    long rows = 0;
    for (ArrowRecordBatch batch : batches) {
      rows += batch.getLength();
    }
    this.rowCount = rows;
  }

  public Schema schema() {
    return schema;
  }

  /** The record batches in stream order; shared, so load them, do not close them. */
  public List<ArrowRecordBatch> batches() {
    return batches;
  }

  public boolean hasDictionaries() {
    return !dictionaries.isEmpty();
  }

  public long rowCount() {
    return rowCount;
  }

  /** Bytes of the record batches' buffers (dictionaries not included). */
  public long batchBytes() {
    long bytes = 0;
    for (ArrowRecordBatch batch : batches) {
      bytes += batch.computeBodyLength();
    }
    return bytes;
  }

  /**
   * The values of dictionary {@code id} as a batch of one column (the dictionary vector's field),
   * shared as {@link #batches()} are: load it, do not close it. Null for an id the stream has no
   * dictionary of.
   */
  public ArrowRecordBatch dictionaryBatch(long id) {
    return dictionaryBatches.get(id);
  }

  @Override
  public Dictionary lookup(long id) {
    return dictionaries.get(id);
  }

  @Override
  public Set<Long> getDictionaryIds() {
    return dictionaries.keySet();
  }

  @Override
  public void close() {
    List<AutoCloseable> owned = new ArrayList<>(batches);
    owned.addAll(dictionaryBatches.values());
    for (Dictionary dictionary : dictionaries.values()) {
      owned.add(dictionary.getVector());
    }
    AutoCloseables.closeNoChecked(AutoCloseables.all(owned));
  }
}
