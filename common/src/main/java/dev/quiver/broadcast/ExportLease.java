package dev.quiver.broadcast;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.AllocationListener;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OwnershipTransferResult;
import org.apache.arrow.memory.ReferenceManager;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim of a task's exports to one consumer on a decoded broadcast ({@link CDataExport}): a
 * {@link BroadcastHold} and an allocator of its own (a child of the entry's) for what the exporter
 * allocates, both ended once, when the task has ended and everything the exports handed out is
 * released. One lease serves all of the task's exports to that consumer ({@link
 * BroadcastReader#pinExportLease}), so an export costs what Arrow's exporter does, not a hold and
 * an allocator per batch.
 *
 * <p>The exported buffers are the entry's, seen through buffers of this lease ({@link #lease}):
 * same memory, reference counts of their own. Arrow's ledgers cannot tell when the last of them is
 * released (a buffer retained into another allocator is not charged to it), so the lease counts its
 * leased buffers itself, and the allocator's bytes through a listener. The lease ends when there
 * are no leased buffers, no bytes, no export running and no task that may export more ({@link
 * #pin()}), in whatever order those reach zero: the consumer may release children before or after
 * their parents, on any thread.
 *
 * <p>It ends on the thread of the last release: inside the allocator's listener when the last thing
 * released was the exporter's own memory. Closing the allocator there is safe: Arrow calls the
 * listener once the bytes are given back and the buffer is off the allocator's books, and touches
 * the allocator no more after it.
 */
final class ExportLease implements AllocationListener {

  private static final Logger LOG = LoggerFactory.getLogger(CDataExport.class);

  private final BroadcastHold hold;
  private final BufferAllocator allocator;
  private final AtomicInteger leasedBuffers = new AtomicInteger();
  private int pins = 1;
  private boolean ended;

  /**
   * The struct of the task's batch exports (a struct of the batch's columns, as the C Data
   * Interface passes a batch), reused while the schema is the same; closed at the task's end.
   */
  private StructVector exportStruct;

  /** The struct's columns as a root, for Arrow's loader. */
  private VectorSchemaRoot exportColumns;

  private ExportLease(BroadcastReader reader, String holder) {
    this.hold = reader.hold(holder);
    BufferAllocator child;
    try {
      child =
          reader
              .viewAllocator()
              .newChildAllocator("C Data export: " + holder, this, 0, Long.MAX_VALUE);
    } catch (RuntimeException | Error e) {
      hold.close();
      throw e;
    }
    this.allocator = child;
  }

  /** A task's lease: pinned once, for the task, until {@link #endTaskPin()}. */
  static ExportLease take(BroadcastReader reader, String holder) {
    return new ExportLease(reader, holder);
  }

  BufferAllocator allocator() {
    return allocator;
  }

  BroadcastHold hold() {
    return hold;
  }

  /**
   * {@code leased} (a batch of {@code schema}, in buffers of this lease) loaded as the columns of a
   * struct with no nulls, to export: the struct of the last export, reloaded, when the schema is
   * the same. Loading releases the last batch's buffers; what was exported holds its own.
   */
  StructVector loadForExport(Schema schema, ArrowRecordBatch leased) {
    if (exportColumns != null && !exportColumns.getSchema().equals(schema)) {
      closeExportStruct();
    }
    if (exportStruct == null) {
      StructVector struct = StructVector.emptyWithDuplicates("", allocator);
      struct.initializeChildrenFromFields(schema.getFields());
      exportStruct = struct;
      exportColumns = new VectorSchemaRoot(schema, struct.getChildrenFromFields(), 0);
    }
    new VectorLoader(exportColumns).load(leased);
    exportStruct.loadFieldBuffers(
        new ArrowFieldNode(leased.getLength(), 0), Collections.singletonList(allocator.getEmpty()));
    return exportStruct;
  }

  private void closeExportStruct() {
    if (exportStruct != null) {
      // The root is the struct's children: closing the struct closes them.
      exportStruct.close();
      exportStruct = null;
      exportColumns = null;
    }
  }

  /** The task has ended: it exports no more, and what its consumer holds alone keeps the lease. */
  void endTaskPin() {
    try {
      closeExportStruct();
    } finally {
      unpin();
    }
  }

  /** Keeps the lease from ending while an export runs (or a stream is open). */
  synchronized void pin() {
    Preconditions.checkState(!ended, "the export's lease has ended");
    pins++;
  }

  void unpin() {
    synchronized (this) {
      Preconditions.checkState(pins > 0, "unpinned more than pinned");
      pins--;
    }
    endIfDone();
  }

  /**
   * {@code shared}'s buffers seen through buffers of this lease, in a batch the caller closes: no
   * byte copied, and no reference taken on the shared buffers (the hold keeps them).
   */
  ArrowRecordBatch lease(ArrowRecordBatch shared) {
    List<ArrowBuf> leased = new ArrayList<>();
    for (ArrowBuf buffer : shared.getBuffers()) {
      leased.add(lease(buffer));
    }
    try {
      // The batch takes a reference of its own on each; the lease's first ones go.
      return new ArrowRecordBatch(shared.getLength(), shared.getNodes(), leased);
    } finally {
      for (ArrowBuf buffer : leased) {
        buffer.getReferenceManager().release();
      }
    }
  }

  private ArrowBuf lease(ArrowBuf shared) {
    ArrowBuf leased =
        new LeasedBuffer(shared.capacity()).buffer(shared.memoryAddress(), shared.capacity());
    leased.writerIndex(shared.writerIndex());
    return leased;
  }

  @Override
  public void onRelease(long size) {
    endIfDone();
  }

  private void endIfDone() {
    synchronized (this) {
      if (ended || pins > 0 || leasedBuffers.get() > 0 || allocator.getAllocatedMemory() > 0) {
        return;
      }
      ended = true;
    }
    // Whatever happens here runs in a consumer's release callback: report, never throw.
    try {
      allocator.close();
    } catch (RuntimeException e) {
      // The entry would not close with this allocator open: keep the hold (a leak at the cache's
      // close) rather than free the entry under it.
      LOG.error("The C Data export {} left memory behind; its hold is kept", hold, e);
      return;
    }
    try {
      hold.close();
    } catch (RuntimeException e) {
      LOG.error("Ending the C Data export {} failed", hold, e);
    }
  }

  /**
   * The reference count of one shared buffer as one export sees it: buffers derived from it
   * (retained into the export's vectors, by the exporter, sliced) share it, and its end is one
   * fewer leased buffer.
   */
  private final class LeasedBuffer implements ReferenceManager {
    private final long size;
    private final AtomicInteger refs = new AtomicInteger(1);

    LeasedBuffer(long size) {
      this.size = size;
      leasedBuffers.incrementAndGet();
    }

    ArrowBuf buffer(long address, long capacity) {
      return new ArrowBuf(this, null, capacity, address);
    }

    @Override
    public int getRefCount() {
      return refs.get();
    }

    @Override
    public boolean release() {
      return release(1);
    }

    @Override
    public boolean release(int decrement) {
      Preconditions.checkArgument(decrement >= 1, "decrement must be at least 1");
      int left = refs.addAndGet(-decrement);
      Preconditions.checkState(left >= 0, "a leased buffer's reference count went negative");
      if (left == 0) {
        leasedBuffers.decrementAndGet();
        endIfDone();
        return true;
      }
      return false;
    }

    @Override
    public void retain() {
      retain(1);
    }

    @Override
    public void retain(int increment) {
      Preconditions.checkArgument(increment >= 1, "increment must be at least 1");
      int before = refs.getAndAdd(increment);
      Preconditions.checkState(before > 0, "a released leased buffer cannot be retained");
    }

    @Override
    public ArrowBuf retain(ArrowBuf srcBuffer, BufferAllocator targetAllocator) {
      retain(1);
      ArrowBuf derived = deriveBuffer(srcBuffer, 0, srcBuffer.capacity());
      derived.readerIndex(srcBuffer.readerIndex());
      derived.writerIndex(srcBuffer.writerIndex());
      return derived;
    }

    @Override
    public ArrowBuf deriveBuffer(ArrowBuf sourceBuffer, long index, long length) {
      Preconditions.checkArgument(
          index >= 0 && length >= 0 && index + length <= sourceBuffer.capacity(),
          "derived range out of the buffer's bounds");
      return buffer(sourceBuffer.memoryAddress() + index, length);
    }

    @Override
    public OwnershipTransferResult transferOwnership(
        ArrowBuf sourceBuffer, BufferAllocator targetAllocator) {
      // Nothing is owned here to move: a transfer is a retain; the source's holder releases its
      // own.
      ArrowBuf transferred = retain(sourceBuffer, targetAllocator);
      return new OwnershipTransferResult() {
        @Override
        public boolean getAllocationFit() {
          return true;
        }

        @Override
        public ArrowBuf getTransferredBuffer() {
          return transferred;
        }
      };
    }

    @Override
    public BufferAllocator getAllocator() {
      return allocator;
    }

    @Override
    public long getSize() {
      return size;
    }

    /** None: the entry's allocator accounts the memory. */
    @Override
    public long getAccountedSize() {
      return 0;
    }
  }
}
