package dev.quiver.broadcast;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.Preconditions;

/**
 * One broadcast's decoded value in a {@link DecodedBroadcastCache}, its derived values and the
 * holds on it. This class enforces which moves of {@link DecodedBroadcastCache.State} exist; the
 * cache decides when they happen.
 *
 * <p>Its monitor guards its state, so that the compiler can check every access (a field cannot name
 * another object's monitor as its guard). The cache's duty on top: every change (a move, a hold, a
 * release, a drop) happens under the cache's monitor too, together with the cache's maps, so that
 * the cache may read a held entry's state without its own monitor. Taking the entry's monitor
 * inside the cache's costs an uncontended lock.
 */
final class CacheEntry {
  final EntryKey key;
  final long broadcastId;
  final BufferAllocator allocator;
  final DerivedValues derived;
  private final CacheCounters counters;

  /** Completes when the decode ends: true if the entry is now shared, false otherwise. */
  final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

  /**
   * Set once, by {@link #decoded(DecodedForm)}, before {@link #outcome} completes or a hold is
   * attached.
   */
  private volatile DecodedForm decoded;

  @GuardedBy("this")
  private DecodedBroadcastCache.State state = DecodedBroadcastCache.State.DECODING;

  @GuardedBy("this")
  private int holders;

  /** Set by {@link DecodedBroadcastCache#drop(long)}: freed, not retained, at its last holder. */
  @GuardedBy("this")
  private boolean dropped;

  /** Of the holds, those of consumers ({@link BroadcastHold}s) rather than of tasks. */
  @GuardedBy("this")
  private int consumerHolds;

  /** The bytes acquired from the storage memory while consumers alone hold it, or null. */
  @GuardedBy("this")
  private EntryBytes consumersCharge;

  /** The bytes acquired from the storage memory while RETAINED. */
  @GuardedBy("this")
  private EntryBytes retainedBytes = EntryBytes.NONE;

  CacheEntry(EntryKey key, BufferAllocator allocator, CacheCounters counters) {
    this.key = key;
    this.broadcastId = key.broadcastId;
    this.allocator = allocator;
    this.counters = counters;
    this.derived = new DerivedValues(broadcastId, allocator, counters);
  }

  /** Sets the decoded form, once: its bytes outside the allocator count from now on. */
  void decoded(DecodedForm form) {
    Preconditions.checkState(decoded == null, "broadcast %s decoded twice", broadcastId);
    decoded = form;
    counters.bytesOutsideAllocators.addAndGet(form.heapBytes() + form.nativeBytes());
  }

  DecodedForm decoded() {
    return decoded;
  }

  synchronized DecodedBroadcastCache.State state() {
    return state;
  }

  synchronized void moveTo(DecodedBroadcastCache.State next) {
    if (!state.canMoveTo(next)) {
      throw new IllegalStateException(
          "broadcast " + broadcastId + ": entry cannot move from " + state + " to " + next);
    }
    state = next;
  }

  /** Takes one hold; returns the holds now. */
  synchronized int hold() {
    if (state == DecodedBroadcastCache.State.RELEASED
        || state == DecodedBroadcastCache.State.FAILED
        || state == DecodedBroadcastCache.State.RETAINED) {
      throw new IllegalStateException(
          "broadcast " + broadcastId + ": a hold on a " + state + " entry");
    }
    return ++holders;
  }

  /** Marks the hold just taken a consumer's. */
  synchronized void holdForConsumer() {
    consumerHolds++;
  }

  /** Ends one hold, a consumer's or a task's; returns the holds left. */
  synchronized int release(boolean consumer) {
    if (holders <= 0 || (consumer && consumerHolds <= 0)) {
      throw new IllegalStateException("broadcast " + broadcastId + ": more releases than holds");
    }
    if (consumer) {
      consumerHolds--;
    }
    return --holders;
  }

  /** Whether consumers hold it and no task does. */
  synchronized boolean onlyConsumersHold() {
    return holders > 0 && holders == consumerHolds;
  }

  /**
   * Accounts its bytes in {@code memory} while consumers alone hold it, once; if the memory has no
   * room, they go unaccounted (and logged): the consumers have the buffers already.
   */
  synchronized void chargeTo(StorageMemory memory) {
    if (consumersCharge != null) {
      return;
    }
    EntryBytes bytes = bytes();
    if (bytes.acquireFrom(memory, broadcastId)) {
      consumersCharge = bytes;
    } else {
      DecodeLog.notAccounted(broadcastId, bytes);
    }
  }

  /** Gives back what {@link #chargeTo} took, if anything. */
  synchronized void dischargeTo(StorageMemory memory) {
    if (consumersCharge != null) {
      consumersCharge.releaseTo(memory, broadcastId);
      consumersCharge = null;
    }
  }

  synchronized int holders() {
    return holders;
  }

  synchronized void drop() {
    dropped = true;
  }

  synchronized boolean dropped() {
    return dropped;
  }

  /** Becomes idle and retained, with {@code bytes} acquired from the storage memory. */
  synchronized void retain(EntryBytes bytes) {
    moveTo(DecodedBroadcastCache.State.RETAINED);
    retainedBytes = bytes;
  }

  synchronized EntryBytes retainedBytes() {
    return retainedBytes;
  }

  /**
   * Its bytes now: its allocator's (decoded batches, views, derived values' Arrow memory), and what
   * its decoded form and derived values keep on the heap and in native memory.
   */
  EntryBytes bytes() {
    DecodedForm form = decoded;
    long heap = derived.heapBytes() + (form == null ? 0 : form.heapBytes());
    long nativeBytes = derived.nativeBytes() + (form == null ? 0 : form.nativeBytes());
    return new EntryBytes(heap, allocator.getAllocatedMemory(), nativeBytes);
  }

  /**
   * Frees this entry, which no task holds and the cache no longer lists (so, outside the monitors):
   * its derived values, its decoded buffers, its allocator.
   */
  void free() {
    RuntimeException failure = null;
    try {
      derived.closeAll();
    } catch (RuntimeException e) {
      failure = e;
    }
    try {
      DecodedForm form = decoded;
      if (form != null) {
        counters.bytesOutsideAllocators.addAndGet(-(form.heapBytes() + form.nativeBytes()));
        form.close();
      }
      allocator.close();
    } catch (RuntimeException e) {
      failure = DerivedValues.addTo(failure, e);
    }
    if (failure != null) {
      throw failure;
    }
  }
}
