package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.DecodedStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Hands a task's batches of a decoded broadcast to native code through the Arrow C Data Interface,
 * without copying them: the exported buffers are the cache entry's own.
 *
 * <p>Ownership: a task's exports to one {@code holder} hold the entry ({@link
 * BroadcastReader#hold(String)}, one hold for all of them) until the task has ended and the
 * consumer has released everything it was given (each array and its children, dictionaries and
 * schema, or the stream and every array it produced), by the release callbacks the C Data Interface
 * defines: on any thread, in any order, even after the task has ended. Until then a drop, an
 * eviction or the cache's close only marks the entry, and once its tasks have ended its bytes are
 * accounted in the cache's storage memory (see {@link BroadcastHold}); the last release ends the
 * hold exactly once. An export still unreleased when the cache closes is logged as a leaked hold
 * naming the broadcast, the task and {@code holder}.
 *
 * <p>Needs Arrow's {@code arrow-c-data} (of the Arrow version Spark ships) on the class path, which
 * Quiver does not bundle: see {@code docs/engines.md}.
 */
@Public
public final class CDataExport {

  private CDataExport() {}

  /**
   * Exports {@code reader}'s current batch as a struct array of its columns (as {@link
   * Data#exportVectorSchemaRoot} does), with the dictionaries of dictionary-encoded columns.
   *
   * @param holder who holds the export, for the logs and leak reports
   * @param out the C struct to fill; the consumer must call its release callback
   * @param outSchema the C struct for the batch's schema, or null for none; the consumer must call
   *     its release callback too, as the export holds the entry until both are released
   * @throws IllegalStateException if the reader is closed or has no current batch
   */
  public static void exportBatch(
      BroadcastReader reader, String holder, ArrowArray out, ArrowSchema outSchema) {
    Objects.requireNonNull(out, "out");
    ArrowRecordBatch shared = reader.currentBatch();
    Schema schema = reader.currentSchema();
    // The stream's own dictionaries, not the task's views of them: the export outlives the task.
    DecodedStream dictionaries = reader.sharedDictionaries();
    ExportLease lease = reader.pinExportLease(Objects.requireNonNull(holder, "holder"));
    out.markReleased();
    if (outSchema != null) {
      outSchema.save(new ArrowSchema.Snapshot());
    }
    boolean exported = false;
    try {
      BufferAllocator allocator = lease.allocator();
      DictionaryViews leasedDictionaries = leasedViews(lease, dictionaries);
      try (ArrowRecordBatch leased = lease.lease(shared)) {
        if (outSchema != null) {
          Data.exportSchema(allocator, schema, leasedDictionaries, outSchema);
        }
        Data.exportVector(
            allocator, lease.loadForExport(schema, leased), leasedDictionaries, out, null);
      } finally {
        leasedDictionaries.close();
      }
      exported = true;
    } finally {
      if (!exported) {
        // What the export registered before it failed goes now, as a consumer's release would.
        out.release();
        if (outSchema != null) {
          outSchema.release();
        }
      }
      lease.unpin();
    }
  }

  /**
   * Exports the batches {@code reader} has not reached yet (every one {@link
   * BroadcastReader#next()} would still return, across its streams) as one stream, and moves the
   * reader to its end. The stream reads the shared batches in place, on whichever thread the
   * consumer calls it from, and holds the entry until the stream and every array it produced are
   * released.
   *
   * @param holder who holds the export, for the logs and leak reports
   * @param out the C struct to fill; the consumer must call its release callback
   * @throws IllegalStateException if the reader is closed, or if the batches left belong to streams
   *     of different schemas (one C stream has one schema)
   */
  public static void exportStream(BroadcastReader reader, String holder, ArrowArrayStream out) {
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(holder, "holder");
    List<DecodedStreamBatch> batches = new ArrayList<>();
    Schema schema = null;
    while (reader.next()) {
      Schema batchSchema = reader.currentSchema();
      if (schema == null) {
        schema = batchSchema;
      } else if (!schema.equals(batchSchema)) {
        throw new IllegalStateException(
            "the batches left are of streams with different schemas: "
                + schema
                + " and "
                + batchSchema);
      }
      batches.add(new DecodedStreamBatch(reader.currentBatch(), reader.sharedDictionaries()));
    }
    DictionaryProvider schemaDictionaries;
    if (schema == null) {
      // Nothing left: an empty stream of the broadcast's last schema (or of no columns).
      List<DecodedStream> streams = reader.broadcast().streams();
      DecodedStream last = streams.isEmpty() ? null : streams.get(streams.size() - 1);
      schema = last == null ? new Schema(Collections.emptyList()) : last.schema();
      schemaDictionaries = last == null ? new DictionaryProvider.MapDictionaryProvider() : last;
    } else {
      schemaDictionaries = batches.get(0).dictionaries;
    }
    ExportLease lease = reader.pinExportLease(holder);
    out.markReleased();
    try {
      // The stream's own pin, taken back when the consumer releases the stream (or, should the
      // export fail, when the exporter closes the reader).
      lease.pin();
      LeasedBatchReader stream;
      try {
        stream = new LeasedBatchReader(lease, schema, schemaDictionaries, batches);
      } catch (RuntimeException | Error e) {
        lease.unpin();
        throw e;
      }
      Data.exportArrayStream(lease.allocator(), stream, out);
    } finally {
      lease.unpin();
    }
  }

  /** A shared batch and the dictionaries of its stream. */
  private static final class DecodedStreamBatch {
    final ArrowRecordBatch batch;
    final DecodedStream dictionaries;

    DecodedStreamBatch(ArrowRecordBatch batch, DecodedStream dictionaries) {
      this.batch = batch;
      this.dictionaries = dictionaries;
    }
  }

  /**
   * A stream's dictionaries seen through buffers of a lease, as vectors of the lease's allocator,
   * closed once exported (the exported arrays hold references of their own).
   */
  private static DictionaryViews leasedViews(ExportLease lease, DecodedStream shared) {
    return new DictionaryViews(shared, lease.allocator(), lease::lease);
  }

  /**
   * The batches of a stream export, each loaded, when the consumer asks for it, into a root of the
   * lease's allocator from buffers of the lease (so the exported arrays are the shared buffers).
   */
  private static final class LeasedBatchReader extends ArrowReader {
    private final ExportLease lease;
    private final Schema schema;
    private final DictionaryProvider schemaDictionaries;
    private final List<DecodedStreamBatch> batches;
    private final VectorSchemaRoot root;
    private DictionaryViews current;
    private int next;
    private boolean closed;

    LeasedBatchReader(
        ExportLease lease,
        Schema schema,
        DictionaryProvider schemaDictionaries,
        List<DecodedStreamBatch> batches) {
      super(lease.allocator(), NoCompressionCodec.Factory.INSTANCE);
      this.lease = lease;
      this.schema = schema;
      this.schemaDictionaries = schemaDictionaries;
      this.batches = batches;
      this.root = VectorSchemaRoot.create(schema, lease.allocator());
    }

    @Override
    public VectorSchemaRoot getVectorSchemaRoot() {
      return root;
    }

    @Override
    public boolean loadNextBatch() {
      Preconditions.checkState(!closed, "stream is closed");
      closeCurrentDictionaries();
      if (next == batches.size()) {
        root.clear();
        return false;
      }
      DecodedStreamBatch batch = batches.get(next++);
      current = leasedViews(lease, batch.dictionaries);
      try (ArrowRecordBatch leased = lease.lease(batch.batch)) {
        new VectorLoader(root).load(leased);
      }
      return true;
    }

    /** The current batch's dictionaries; before the first, the first's (for the schema). */
    @Override
    public Dictionary lookup(long id) {
      return current != null ? current.lookup(id) : schemaDictionaries.lookup(id);
    }

    @Override
    public Set<Long> getDictionaryIds() {
      return current != null ? current.getDictionaryIds() : schemaDictionaries.getDictionaryIds();
    }

    @Override
    public long bytesRead() {
      return 0;
    }

    @Override
    protected Schema readSchema() {
      return schema;
    }

    @Override
    public void close(boolean closeReadSource) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        closeCurrentDictionaries();
        root.close();
      } finally {
        lease.unpin();
      }
    }

    @Override
    protected void closeReadSource() {}

    private void closeCurrentDictionaries() {
      if (current != null) {
        current.close();
        current = null;
      }
    }
  }
}
