package dev.quiver.broadcast;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.util.Preconditions;

/**
 * One cache entry's derived values, by key (see {@link BroadcastReader#derived(Object,
 * Derivation)}; the rules are {@link DecodedBroadcastCache}'s). Each entry owns one.
 *
 * <p>The caller of {@link #get} holds the entry for the whole call, so the entry, and with it these
 * values, cannot be freed under a build or a wait; {@link #closeAll()} runs only once no task holds
 * the entry. This object's monitor guards its slots; a slot's own monitor guards its state. Locks
 * are taken in the order cache, entry, these values, slot; none of this class calls back into the
 * cache.
 */
final class DerivedValues {

  /** The part a task asking for a key plays, given what it finds for the key. */
  private enum Role {
    /** Nothing there: it builds the value. */
    BUILD,
    /**
     * Another task is building it: it waits, then reuses it (or asks again if the build failed).
     */
    WAIT,
    /** Built: it reuses it. */
    REUSE
  }

  /**
   * The life of one derived value: BUILDING by the task that asked first, then READY (shared as its
   * entry is) or FAILED (gone from its entry, so the next task to ask builds anew). A READY value
   * becomes CLOSED when its entry is freed; its entry, held by its builder, cannot go while it is
   * BUILDING.
   */
  enum State {
    BUILDING,
    READY,
    FAILED,
    CLOSED;

    boolean canMoveTo(State next) {
      switch (this) {
        case BUILDING:
          return next == READY || next == FAILED;
        case READY:
          return next == CLOSED;
        default:
          return false;
      }
    }
  }

  private final long broadcastId;
  private final BufferAllocator entryAllocator;
  private final CacheCounters counters;

  @GuardedBy("this")
  private final Map<Object, Slot> slots = new HashMap<>();

  /** Numbers the values' allocators within the entry. */
  @GuardedBy("this")
  private int nextNumber;

  /** The heap bytes of the READY values. */
  @GuardedBy("this")
  private long heapBytes;

  /** The native bytes of the READY values. */
  @GuardedBy("this")
  private long nativeBytes;

  DerivedValues(long broadcastId, BufferAllocator entryAllocator, CacheCounters counters) {
    this.broadcastId = broadcastId;
    this.entryAllocator = entryAllocator;
    this.counters = counters;
  }

  /**
   * Reuses the value for {@code key}, waits for the task building it, or builds it. The caller
   * holds the entry throughout.
   *
   * @param shared whether the entry is shared (for the log: a private entry's value is one task's)
   */
  <T> T get(
      DecodedForm decoded,
      boolean shared,
      TaskScope task,
      BroadcastReader asker,
      Object key,
      Derivation<T> derivation)
      throws IOException {
    while (true) {
      Slot slot;
      Role role;
      synchronized (this) {
        slot = slots.get(key);
        if (slot == null) {
          slot = new Slot(nextNumber++);
          slots.put(key, slot);
          role = Role.BUILD;
        } else {
          role = slot.roleOfAsker();
        }
      }
      Object value;
      switch (role) {
        case BUILD:
          value = build(decoded, shared, slot, key, task, asker, derivation);
          break;
        case REUSE:
          value = reuse(slot, key, task);
          break;
        case WAIT:
          if (!await(slot, key, task, asker)) {
            // The build failed, and its slot is gone: ask again; one of the waiters builds.
            continue;
          }
          value = reuse(slot, key, task);
          break;
        default:
          throw new AssertionError(role);
      }
      // One key means one derivation, of one type (BroadcastReader#derived's contract).
      @SuppressWarnings("unchecked")
      T typed = (T) value;
      return typed;
    }
  }

  /** The heap bytes of the values built so far (their Arrow bytes are in the entry's allocator). */
  synchronized long heapBytes() {
    return heapBytes;
  }

  /** The native bytes of the values built so far. */
  synchronized long nativeBytes() {
    return nativeBytes;
  }

  /**
   * Closes every value (its release, then its allocator). Only for an entry no task holds and the
   * cache no longer lists. A release that throws is logged and does not keep the rest from being
   * closed; an allocator that fails to close (memory a release did not free) is thrown, loud as a
   * leaked view would be, after the rest are closed.
   */
  void closeAll() {
    Map<Object, Slot> closing;
    synchronized (this) {
      closing = new HashMap<>(slots);
      slots.clear();
    }
    RuntimeException failure = null;
    for (Map.Entry<Object, Slot> entry : closing.entrySet()) {
      Slot slot = entry.getValue();
      DerivedValue<?> value = slot.close();
      try {
        value.close();
      } catch (RuntimeException e) {
        DecodeLog.derivedReleaseFailed(broadcastId, entry.getKey(), e);
      }
      counters.bytesOutsideAllocators.addAndGet(-(value.heapBytes() + value.nativeBytes()));
      try {
        slot.allocator().close();
      } catch (RuntimeException e) {
        failure = addTo(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** {@code failure} with {@code next} added, as the first failure or a suppressed one. */
  static RuntimeException addTo(RuntimeException failure, RuntimeException next) {
    if (failure == null) {
      return next;
    }
    failure.addSuppressed(next);
    return failure;
  }

  /** Builds {@code slot}'s value, outside every monitor, as its builder. */
  private Object build(
      DecodedForm decoded,
      boolean shared,
      Slot slot,
      Object key,
      TaskScope task,
      BroadcastReader asker,
      Derivation<?> derivation)
      throws IOException {
    long start = System.nanoTime();
    // Made here, outside every monitor: an allocator tells its listeners, which are foreign code.
    BufferAllocator valueAllocator =
        entryAllocator.newChildAllocator(
            entryAllocator.getName() + "-derived-" + slot.number, 0, Long.MAX_VALUE);
    DerivedValue<?> built = null;
    try {
      // It tells what the asking task's open cost: the build is that task's.
      try (BroadcastReader buildReader =
          new BroadcastReader(
              decoded,
              entryAllocator,
              BroadcastReader.BUILDING_DERIVATION,
              asker.served(),
              asker.decodeNanos(),
              asker.waitNanos())) {
        built = derivation.build(buildReader, valueAllocator);
      }
      Preconditions.checkState(built != null, "derivation %s returned no value", key);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDerivations.incrementAndGet();
      synchronized (this) {
        slot.moveTo(State.FAILED);
        slots.remove(key, slot);
      }
      // A value built before the build reader failed to close goes too.
      AutoCloseables.close(e, built, valueAllocator);
      slot.outcome.complete(false);
      DecodeLog.failedDerivation(broadcastId, key, task, start, e);
      throw e;
    }
    synchronized (this) {
      slot.ready(built, valueAllocator);
      heapBytes += built.heapBytes();
      nativeBytes += built.nativeBytes();
    }
    counters.bytesOutsideAllocators.addAndGet(built.heapBytes() + built.nativeBytes());
    counters.derivedBuilds.incrementAndGet();
    slot.outcome.complete(true);
    DecodeLog.derivedBuilt(
        broadcastId, key, task, shared, start, valueAllocator.getAllocatedMemory(), built);
    return built.value();
  }

  /** The READY value of {@code slot}, which cannot close while the asking task holds the entry. */
  private Object reuse(Slot slot, Object key, TaskScope task) {
    Object value = slot.readyValue();
    counters.derivedReuses.incrementAndGet();
    DecodeLog.derivedReused(broadcastId, key, task);
    return value;
  }

  /**
   * Waits for another task's build of {@code slot}; true if the value is READY, false if the build
   * failed.
   */
  private boolean await(Slot slot, Object key, TaskScope task, BroadcastReader asker)
      throws IOException {
    counters.waits.incrementAndGet();
    DecodeLog.derivedWaiting(broadcastId, key, task);
    long waitStart = System.nanoTime();
    try {
      return KillableWait.await(
          slot.outcome, task, () -> "broadcast " + broadcastId + "'s derived value " + key);
    } finally {
      long waited = System.nanoTime() - waitStart;
      counters.waitNanos.addAndGet(waited);
      asker.addWaitNanos(waited);
    }
  }

  /** One key's value: its state machine, its allocator and, once READY, the value. */
  private final class Slot {
    final int number;

    /** Completes when the build ends: true if the value is READY, false if the build failed. */
    final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

    @GuardedBy("this")
    private State state = State.BUILDING;

    @GuardedBy("this")
    private DerivedValue<?> value;

    /** Where the value keeps its Arrow memory: a child of the entry's, closed with the value. */
    @GuardedBy("this")
    private BufferAllocator allocator;

    Slot(int number) {
      this.number = number;
    }

    synchronized Role roleOfAsker() {
      switch (state) {
        case BUILDING:
          return Role.WAIT;
        case READY:
          return Role.REUSE;
        default:
          // FAILED and CLOSED slots are no longer listed.
          throw new IllegalStateException(describe() + " is " + state + " but still listed");
      }
    }

    synchronized void moveTo(State next) {
      if (!state.canMoveTo(next)) {
        throw new IllegalStateException(describe() + " cannot move from " + state + " to " + next);
      }
      state = next;
    }

    synchronized void ready(DerivedValue<?> built, BufferAllocator valueAllocator) {
      moveTo(State.READY);
      value = built;
      allocator = valueAllocator;
    }

    synchronized Object readyValue() {
      Preconditions.checkState(state == State.READY, "reusing a %s value", state);
      return value.value();
    }

    /** Moves a READY value to CLOSED and returns it, for the caller to close with its allocator. */
    synchronized DerivedValue<?> close() {
      moveTo(State.CLOSED);
      return value;
    }

    synchronized BufferAllocator allocator() {
      return allocator;
    }

    private String describe() {
      return "broadcast " + broadcastId + ": derived value " + number;
    }
  }
}
