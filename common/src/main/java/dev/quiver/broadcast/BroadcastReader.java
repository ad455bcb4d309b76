package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.io.Closeables;
import dev.quiver.ipc.DecodedStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * One task's pass over a decoded broadcast, batch by batch across its streams. Each batch is a
 * view: a {@link VectorSchemaRoot} of the reader's own whose vectors hold references on the shared
 * buffers, so a consumer may close it (or transfer its buffers away) without affecting other tasks.
 * The reader closes a view when it moves to the next batch, and the last one when the task ends.
 *
 * <p>Not thread-safe: one task, one thread.
 */
@Public
public final class BroadcastReader implements AutoCloseable {

  private final DecodedBroadcast broadcast;
  private final BufferAllocator viewAllocator;
  private int streamIndex;
  private int batchIndex = -1;
  private VectorSchemaRoot view;
  private final List<AutoCloseable> viewResources = new ArrayList<>();
  // Views the consumer kept past next(), with what was tied to them; closed with the reader.
  private final List<AutoCloseable> keptViews = new ArrayList<>();
  private boolean closed;

  BroadcastReader(DecodedBroadcast broadcast, BufferAllocator viewAllocator) {
    this.broadcast = broadcast;
    this.viewAllocator = viewAllocator;
  }

  /**
   * Moves to the next batch, closing the current view.
   *
   * @return false when every batch of every stream has been read
   */
  public boolean next() {
    if (closed) {
      throw new IllegalStateException("broadcast reader is closed");
    }
    closeView();
    List<DecodedStream> streams = broadcast.streams();
    while (streamIndex < streams.size()) {
      List<ArrowRecordBatch> batches = streams.get(streamIndex).batches();
      if (batchIndex + 1 < batches.size()) {
        batchIndex++;
        view = VectorSchemaRoot.create(streams.get(streamIndex).schema(), viewAllocator);
        new VectorLoader(view).load(batches.get(batchIndex));
        return true;
      }
      streamIndex++;
      batchIndex = -1;
    }
    return false;
  }

  /** The current batch's view; valid until {@link #next()} or the end of the task. */
  public VectorSchemaRoot current() {
    if (view == null) {
      throw new IllegalStateException("no current batch: call next() first");
    }
    return view;
  }

  /** Index of the stream the current batch belongs to. */
  public int streamIndex() {
    return streamIndex;
  }

  /** Dictionaries of the current batch's stream, for dictionary-encoded fields. */
  public DictionaryProvider dictionaries() {
    current();
    return broadcast.streams().get(streamIndex);
  }

  /** The decoded broadcast this reader walks (shared; do not close). */
  public DecodedBroadcast broadcast() {
    return broadcast;
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
  }

  /**
   * Closes the current view and every kept one. Idempotent; the task's hold on the broadcast ends
   * with the task.
   */
  @Override
  public void close() {
    closed = true;
    try {
      closeView();
    } finally {
      Closeables.closeAll(keptViews);
      keptViews.clear();
    }
  }

  private void closeView() {
    if (view != null) {
      viewResources.add(view);
      view = null;
      try {
        Closeables.closeAll(viewResources);
      } finally {
        viewResources.clear();
      }
    }
  }
}
