package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.DecodedStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One task's pass over a decoded broadcast, batch by batch across its streams. Each batch is a
 * view: a {@link VectorSchemaRoot} of the reader's own whose vectors hold references on the shared
 * buffers, so a consumer may close it (or transfer its buffers away) without affecting other tasks.
 * The reader closes a view when it moves to the next batch, and the last one when the task ends. A
 * view is made when first asked for ({@link #current()}): a consumer that reads the shared batch
 * itself ({@link #currentBatch()}) makes none. Dictionaries are seen the same way ({@link
 * #dictionaries()}): vectors of the task's own holding references on the shared dictionaries.
 *
 * <p>The reader also tells what its task's open cost ({@link #served()}, {@link #decodeNanos()},
 * {@link #waitNanos()}): the per-task side of {@link DecodedBroadcastCache#counters()}, taken at
 * the same places, for engines that report per-task figures.
 *
 * <p>Not thread-safe: one task, one thread.
 */
@Public
public final class BroadcastReader implements AutoCloseable {

  private final DecodedForm decoded;

  /** {@link #decoded} when it is Arrow IPC, else null: resolved once, not per batch. */
  private final DecodedBroadcast arrowStreams;

  private final BufferAllocator viewAllocator;
  private int streamIndex;
  private int batchIndex = -1;
  // The current batch (shared), and its view once current() made one.
  private ArrowRecordBatch batch;
  private VectorSchemaRoot view;
  private final List<AutoCloseable> viewResources = new ArrayList<>();
  // Views the consumer kept past next(), with what was tied to them; closed with the reader.
  private final List<AutoCloseable> keptViews = new ArrayList<>();

  /**
   * The leases of this task's C Data exports, one per holder: each export pins its holder's lease,
   * and the task's own pin on it ends with the reader, so that a task's exports to one consumer
   * share one hold and one allocator instead of taking them per batch.
   */
  private final Map<String, ExportLease> exportLeases = new HashMap<>();

  // This task's views of each stream's dictionaries, by stream index; closed with the reader.
  private final Map<Integer, DictionaryViews> dictionaryViews = new HashMap<>();

  private final HeldEntry entry;
  private final Served served;
  private final long decodeNanos;
  private long waitNanos;
  private boolean closed;

  /**
   * How the cache served a task's open, one value per counter of {@link CacheCounters} that counts
   * opens: every open that returns a reader is exactly one of them.
   */
  public enum Served {
    /**
     * This task decoded the broadcast for the tasks that overlap it ({@link
     * CacheCounters#decodes()}). Also when the decoded form then said it cannot be shared ({@link
     * DecodedForm#whyNotShared()}) and the copy was kept for this task alone: the decode was meant
     * to be shared.
     */
    DECODED,
    /**
     * This task decoded the broadcast for itself alone ({@link CacheCounters#privateDecodes()}):
     * sharing off, or after another task's shared decode failed or made a form that cannot be
     * shared (having waited for it).
     */
    PRIVATE,
    /**
     * This task read the decode of another running task, waiting for it if it was still decoding
     * ({@link CacheCounters#sharedReads()}).
     */
    SHARED,
    /**
     * This task read an idle entry the cache had retained, without decoding or waiting ({@link
     * CacheCounters#retainedReads()}).
     */
    RETAINED
  }

  /**
   * The task's hold on the cache's entry, where a reader's derived values and further holds come
   * from.
   */
  interface HeldEntry {
    <T> T derived(Object key, Derivation<T> derivation) throws IOException;

    BroadcastHold holdAgain(String holder);
  }

  /**
   * For the reader a {@link Derivation} builds from: it cannot ask for a derived value, nor hold
   * the broadcast past the build.
   */
  static final HeldEntry BUILDING_DERIVATION =
      new HeldEntry() {
        @Override
        public <T> T derived(Object key, Derivation<T> derivation) {
          throw new IllegalStateException(
              "a derivation cannot ask for a derived value (key " + key + ") while it builds one");
        }

        @Override
        public BroadcastHold holdAgain(String holder) {
          throw new IllegalStateException(
              "a derivation cannot hold the broadcast (for " + holder + ") while it builds");
        }
      };

  BroadcastReader(
      DecodedForm decoded,
      BufferAllocator viewAllocator,
      HeldEntry entry,
      Served served,
      long decodeNanos,
      long waitNanos) {
    this.decoded = decoded;
    this.arrowStreams = decoded instanceof DecodedBroadcast ? (DecodedBroadcast) decoded : null;
    this.viewAllocator = viewAllocator;
    this.entry = entry;
    this.served = served;
    this.decodeNanos = decodeNanos;
    this.waitNanos = waitNanos;
  }

  /** How the cache served this task's open. */
  public Served served() {
    return served;
  }

  /**
   * Nanoseconds this task spent decoding the broadcast: more than zero when {@link #served()} is
   * {@link Served#DECODED} or {@link Served#PRIVATE}, zero otherwise.
   */
  public long decodeNanos() {
    return decodeNanos;
  }

  /**
   * Nanoseconds this task spent waiting for other tasks' work: for another task's decode while it
   * opened the broadcast, and for derived values other tasks were building, through {@link
   * #derived(Object, Derivation)}, so far. Zero for a task that waited for nothing. The tasks'
   * waits summed are {@link CacheCounters#waitNanos()}, but for the waits of tasks that were killed
   * or failed while they waited (those tasks get no reader).
   */
  public long waitNanos() {
    return waitNanos;
  }

  /** Adds a wait for a derived value, on this reader's task's thread. */
  void addWaitNanos(long nanos) {
    waitNanos += nanos;
  }

  /**
   * Moves to the next batch, closing the current view.
   *
   * @return false when every batch of every stream has been read
   */
  public boolean next() {
    Preconditions.checkState(!closed, "broadcast reader is closed");
    closeView();
    List<DecodedStream> streams = streams();
    while (streamIndex < streams.size()) {
      List<ArrowRecordBatch> batches = streams.get(streamIndex).batches();
      if (batchIndex + 1 < batches.size()) {
        batchIndex++;
        batch = batches.get(batchIndex);
        return true;
      }
      streamIndex++;
      batchIndex = -1;
    }
    return false;
  }

  /** The current batch's view; valid until {@link #next()} or the end of the task. */
  public VectorSchemaRoot current() {
    currentBatch();
    if (view == null) {
      view =
          VectorSchemaRoot.create(arrowStreams.streams().get(streamIndex).schema(), viewAllocator);
      new VectorLoader(view).load(batch);
    }
    return view;
  }

  /**
   * The current batch as decoded, for consumers that read its buffers in place: shared with every
   * task reading the broadcast, so never close it, release its buffers or write to them. Its
   * buffers were validated when decoded and stay valid until this task completes (the task's hold
   * on the decoded broadcast ends then), past {@link #next()} and {@link #close()}; the object
   * itself is the same for every task. A batch of a stream with dictionaries holds indices, into
   * the dictionaries of {@link #dictionaries()}.
   */
  public ArrowRecordBatch currentBatch() {
    Preconditions.checkState(!closed, "broadcast reader is closed");
    Preconditions.checkState(batch != null, "no current batch: call next() first");
    return batch;
  }

  /** The schema of the current batch's stream. */
  public Schema currentSchema() {
    currentBatch();
    return arrowStreams.streams().get(streamIndex).schema();
  }

  /** Index of the stream the current batch belongs to. */
  public int streamIndex() {
    return streamIndex;
  }

  /**
   * Rows of the whole broadcast, every stream and batch: a size hint for what is derived; -1 when
   * the broadcast was not decoded as Arrow IPC.
   */
  public long rowCount() {
    return arrowStreams != null ? arrowStreams.rowCount() : -1;
  }

  /**
   * Dictionaries of the current batch's stream, for dictionary-encoded fields: this task's views of
   * the shared dictionaries, as {@link #current()} is of the shared batch. Each dictionary's vector
   * is the task's own and holds references on the shared dictionary's buffers (no value is copied),
   * so a consumer may close it or transfer its buffers away without affecting other tasks. The same
   * views are returned for every batch of the stream; they stay valid past {@link #next()}, for
   * views kept with {@link #keepCurrent()}, and are closed with the reader. A delta-dictionary
   * stream's views hold every value its deltas appended: the stream is decoded whole before any
   * task reads it.
   */
  public DictionaryProvider dictionaries() {
    currentBatch();
    return dictionaryViews.computeIfAbsent(
        streamIndex,
        stream ->
            new DictionaryViews(sharedDictionaries(), viewAllocator, UnaryOperator.identity()));
  }

  /**
   * The shared dictionaries of the current batch's stream, which live as long as the entry: for
   * exports that outlive this reader (never close them, nor their vectors).
   */
  DecodedStream sharedDictionaries() {
    currentBatch();
    return arrowStreams.streams().get(streamIndex);
  }

  /**
   * The Arrow IPC streams this reader walks (shared; do not close).
   *
   * @throws IllegalStateException if the broadcast was decoded into another form
   */
  public DecodedBroadcast broadcast() {
    return decoded(DecodedBroadcast.class);
  }

  /** The streams to walk; a batch is current only once {@link #next()} has found them. */
  private List<DecodedStream> streams() {
    return arrowStreams != null ? arrowStreams.streams() : broadcast().streams();
  }

  /**
   * The form the broadcast was decoded into ({@link BroadcastDecoder}), shared by every task that
   * reads the entry: do not close it. It stays valid until this task completes, or while a {@link
   * #hold(String)} is open.
   *
   * @throws IllegalStateException if the form is not a {@code type}
   */
  public <D extends DecodedForm> D decoded(Class<D> type) {
    Preconditions.checkState(!closed, "broadcast reader is closed");
    if (!type.isInstance(decoded)) {
      throw new IllegalStateException(
          "the broadcast was decoded into a "
              + decoded.getClass().getName()
              + ", not a "
              + type.getName()
              + (type == DecodedBroadcast.class ? ": it has no Arrow batches to read" : ""));
    }
    return type.cast(decoded);
  }

  /**
   * The value {@code derivation} builds from this broadcast under {@code key} (compared by {@code
   * equals} and {@code hashCode}; one key must always mean one derivation, of one type), built once
   * per cache entry: the first task to ask builds it, tasks asking meanwhile wait (holding the
   * entry, and stopping if killed, as decode waiters do), later tasks reuse it. Different keys are
   * different values.
   *
   * <p>The value lives as long as the entry: it is shared with every task that reads the entry,
   * retained with it, and closed when the entry is freed (never while a task holds it), so the
   * returned value may be used until this task completes. Its bytes count in the entry's. A build
   * that fails is not cached: the exception reaches the task that built, and the tasks that were
   * waiting, as the next task to ask, build again. On a private entry (sharing off, a form that
   * cannot be shared, after a failed shared decode) the value is this task's alone. See {@link
   * DecodedBroadcastCache} for the rules.
   *
   * @throws IOException or any other exception of this task's build; the engine's task-killed
   *     exception if the task is killed while it waits; {@link java.io.InterruptedIOException} if
   *     its thread is interrupted while it waits
   */
  public <T> T derived(Object key, Derivation<T> derivation) throws IOException {
    Preconditions.checkState(!closed, "broadcast reader is closed");
    Preconditions.checkNotNull(key, "key");
    Preconditions.checkNotNull(derivation, "derivation");
    return entry.derived(key, derivation);
  }

  /**
   * Holds the decoded broadcast for {@code holder} until the returned hold is closed, past this
   * task's end if need be: for a consumer that keeps buffers of the broadcast after the task, such
   * as native code the batches were exported to. The batches ({@link #currentBatch()}) and every
   * buffer of the entry stay valid while the hold is open; views the consumer made from this
   * reader's allocator it must release before closing the hold.
   *
   * @param holder who holds, for the logs and for leak reports at the cache's close
   */
  public BroadcastHold hold(String holder) {
    Preconditions.checkState(!closed, "broadcast reader is closed");
    Preconditions.checkNotNull(holder, "holder");
    return entry.holdAgain(holder);
  }

  /**
   * The lease of this task's exports to {@code holder}, pinned for one export: the caller unpins it
   * when the export is done.
   */
  ExportLease pinExportLease(String holder) {
    synchronized (exportLeases) {
      Preconditions.checkState(!closed, "broadcast reader is closed");
      ExportLease lease = exportLeases.get(holder);
      if (lease == null) {
        lease = ExportLease.take(this, holder);
        exportLeases.put(holder, lease);
      }
      lease.pin();
      return lease;
    }
  }

  /** The entry's allocator, of the views and of {@link CDataExport}'s allocators. */
  BufferAllocator viewAllocator() {
    return viewAllocator;
  }

  /**
   * Ties {@code resource} (say, vectors a consumer derived from the current view in the view's
   * allocator) to the current view: it is closed, before the view, when the view is.
   */
  public void closeWithView(AutoCloseable resource) {
    current();
    viewResources.add(resource);
  }

  /**
   * Keeps the current view, and what was tied to it, open past {@link #next()}: it is closed when
   * the reader is (at task end). For consumers that need several batches at once, such as the build
   * side of a hash table.
   */
  public void keepCurrent() {
    current();
    keptViews.addAll(viewResources);
    keptViews.add(view);
    viewResources.clear();
    view = null;
    batch = null;
  }

  /**
   * Closes the current view, every kept one and the views of dictionaries. Idempotent; the task's
   * hold on the broadcast ends with the task.
   */
  @Override
  public void close() {
    List<ExportLease> leases;
    synchronized (exportLeases) {
      closed = true;
      leases = new ArrayList<>(exportLeases.values());
      exportLeases.clear();
    }
    try {
      closeView();
    } finally {
      try {
        List<AutoCloseable> rest = new ArrayList<>(keptViews);
        rest.addAll(dictionaryViews.values());
        keptViews.clear();
        dictionaryViews.clear();
        AutoCloseables.closeNoChecked(AutoCloseables.all(rest));
      } finally {
        // What the consumers still hold keeps each lease past the task.
        leases.forEach(ExportLease::endTaskPin);
      }
    }
  }

  private void closeView() {
    batch = null;
    if (view != null) {
      viewResources.add(view);
      view = null;
      try {
        AutoCloseables.closeNoChecked(AutoCloseables.all(viewResources));
      } finally {
        viewResources.clear();
      }
    }
  }
}
