package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.util.Preconditions;

/**
 * Decodes each broadcast once per executor while its tasks overlap, and lets those tasks share the
 * decoded buffers.
 *
 * <p>The rules, each of which a test breaks on purpose:
 *
 * <ul>
 *   <li>The first task to read a broadcast decodes it into a child allocator the cache owns; no
 *       lock is held while it decodes.
 *   <li>Tasks that arrive during the decode hold the entry from the moment they arrive (so the
 *       decoding task cannot free it under them) and wait for it; a waiter that is killed stops at
 *       once where its engine tells of kills ({@link TaskScope#onKill(Runnable)}), otherwise at its
 *       next check (every {@link #KILL_CHECK_MILLIS} ms).
 *   <li>Each task reads its own views (see {@link BroadcastReader}); its hold on the entry ends
 *       when the task completes. Without retention the entry is freed when its last holder
 *       completes, and a later task decodes again.
 *   <li>With {@link Retention}, a shared entry whose last holder completes stays, idle, if its
 *       broadcast is still live, its bytes fit in {@link Retention#maxBytes()} (idle entries are
 *       evicted, least recently used first, to make room) and {@link Retention#memory()} grants
 *       them. A later task reads it without decoding. Its bytes are acquired from the storage
 *       memory when it becomes idle and released when it stops being idle, whether it is read again
 *       or evicted: while tasks hold an entry, its memory is theirs, and is not counted twice.
 *   <li>Only idle entries are evicted: to make room in the budget; under memory pressure (checked
 *       at each open and at the end of each hold, least recently used first until the pressure is
 *       gone); when the broadcast is no longer live (checked then too, or said by {@link
 *       #drop(long)}); and when the cache is closed. A held entry that is dropped, or outlives the
 *       cache's close, is freed by its last holder instead of retained.
 *   <li>A failed decode is not cached and leaves nothing allocated: its waiters decode for
 *       themselves, and the next task to arrive tries a shared decode again.
 *   <li>A broadcast whose streams carry dictionaries is not shared: the task that decoded it keeps
 *       it as its own, and the others decode for themselves.
 *   <li>With sharing off a task decodes for itself, through the same reader.
 *   <li>Each open that returns a reader is counted once, in {@link CacheCounters#decodes()}, {@link
 *       CacheCounters#privateDecodes()}, {@link CacheCounters#sharedReads()} or {@link
 *       CacheCounters#retainedReads()}, and its reader's {@link BroadcastReader#served()} says
 *       which; its {@link BroadcastReader#decodeNanos()} and {@link BroadcastReader#waitNanos()}
 *       are this task's share of the decoding and waiting, taken where the counters are.
 * </ul>
 *
 * <p>Derived values ({@link BroadcastReader#derived(Object, Derivation)}), each rule broken on
 * purpose by a test too:
 *
 * <ul>
 *   <li>An entry has at most one value per key (compared by {@code equals}); different keys of one
 *       entry are separate values, built and freed separately.
 *   <li>The first task to ask for a key builds its value, outside the monitor, from a fresh reader
 *       of its own and into a child allocator of the entry's. Tasks asking meanwhile wait, and a
 *       killed waiter stops as a killed decode waiter does (the build goes on). Later tasks reuse
 *       the value. While a task builds or waits it holds the entry once more, so the entry cannot
 *       go under the build even if the task's own hold ends meanwhile.
 *   <li>A failed build is not cached and leaves nothing allocated (its child allocator is closed);
 *       it is rethrown to its builder, and the waiters and the next task to ask try again, one of
 *       them building.
 *   <li>A value is closed (its release run, then its child allocator closed) when its entry is
 *       freed, however that happens: at its last holder without retention, or on eviction of the
 *       retained entry; never while a task holds the entry.
 *   <li>An entry's bytes are its allocator's (decoded batches, views, derived values' Arrow memory)
 *       plus its values' {@link DerivedValue#heapBytes()}, wherever an entry's bytes count: the
 *       gauges, the snapshot, the retention budget and the storage memory. They are taken each time
 *       the entry becomes idle, so a value built while the entry is held is counted from then on.
 *   <li>The decoded batches stay beside the derived values: a retained entry keeps both, and its
 *       bytes are their sum (a value may keep positions into the batches rather than copies).
 *   <li>On a private entry (sharing off, dictionaries, after a failed shared decode) a value is
 *       built for that task alone and closed with the entry when the task's hold ends.
 *   <li>Waits for a derived value count in {@link CacheCounters#waits()} and {@link
 *       CacheCounters#waitNanos()} with waits for a decode, and in the waiting task's {@link
 *       BroadcastReader#waitNanos()}.
 * </ul>
 *
 * <p>State changes happen under one monitor in short critical sections; decoding and waiting happen
 * outside it. {@link Retention}'s liveness test and its {@link StorageMemory} are called under the
 * monitor, so that what is retained and what is acquired always agree: they must not call back into
 * the cache.
 */
@Public
public final class DecodedBroadcastCache {

  /**
   * How often a task waiting on another task's work checks whether it was killed, where its engine
   * does not tell of kills ({@link TaskScope#onKill(Runnable)}).
   */
  public static final long KILL_CHECK_MILLIS = 100;

  private final BufferAllocator allocator;
  private final BroadcastDecoder decoder;
  private final long maxEntryBytes;
  private final Retention retention;
  private final Map<Long, Entry> entries = new HashMap<>();

  /** The idle retained entries, least recently used first. Guarded by the monitor. */
  private final LinkedHashMap<Long, Entry> retained = new LinkedHashMap<>();

  private final CacheCounters counters;

  /** Set by {@link #close()}: from then on nothing is retained. Guarded by the monitor. */
  private boolean closed;

  /**
   * A cache that decodes broadcasts as Arrow IPC streams (see {@link BroadcastSource}).
   *
   * @param allocator parent of every entry's allocator; the cache never closes it
   * @param maxEntryBytes the most one decoded broadcast may allocate; a stream claiming more is
   *     rejected as corrupt before the memory is taken
   */
  public DecodedBroadcastCache(BufferAllocator allocator, long maxEntryBytes) {
    this(allocator, maxEntryBytes, Retention.disabled());
  }

  /**
   * A cache that decodes broadcasts as Arrow IPC streams and keeps them past their last holder as
   * {@code retention} allows.
   *
   * @param allocator parent of every entry's allocator; the cache never closes it
   * @param maxEntryBytes the most one decoded broadcast may allocate
   * @param retention {@link Retention#disabled()} to free each entry with its last holder
   */
  public DecodedBroadcastCache(BufferAllocator allocator, long maxEntryBytes, Retention retention) {
    this(allocator, BroadcastDecoder.ARROW_IPC, maxEntryBytes, retention);
  }

  /** A cache without a bound on one broadcast's decoded bytes (beyond its allocator's). */
  public DecodedBroadcastCache(BufferAllocator allocator) {
    this(allocator, Long.MAX_VALUE);
  }

  /** A cache with another decoder: for tests that script decodes and their failures. */
  DecodedBroadcastCache(BufferAllocator allocator, BroadcastDecoder decoder, long maxEntryBytes) {
    this(allocator, decoder, maxEntryBytes, Retention.disabled());
  }

  /** A cache with another decoder and retention: for tests. */
  DecodedBroadcastCache(
      BufferAllocator allocator,
      BroadcastDecoder decoder,
      long maxEntryBytes,
      Retention retention) {
    Preconditions.checkArgument(
        maxEntryBytes > 0, "maxEntryBytes must be positive: %s", maxEntryBytes);
    this.allocator = Preconditions.checkNotNull(allocator, "allocator");
    this.decoder = Preconditions.checkNotNull(decoder, "decoder");
    this.maxEntryBytes = maxEntryBytes;
    this.retention = Preconditions.checkNotNull(retention, "retention");
    this.counters = new CacheCounters(allocator);
  }

  /**
   * Opens {@code source} for {@code task}. The task holds the decoded broadcast until it completes;
   * the returned reader's current view is closed then too.
   *
   * @param share false to decode for this task alone (the setting turned off)
   */
  public BroadcastReader open(BroadcastSource source, TaskScope task, boolean share)
      throws IOException {
    if (!share) {
      checkRetained();
      return decodePrivately(source, task, DecodeLog.PrivateReason.SHARING_OFF, 0);
    }
    long id = source.broadcastId();
    Entry entry;
    State found;
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      evictDroppedAndPressed(evicted);
      entry = entries.get(id);
      if (entry == null) {
        entry = new Entry(id, newEntryAllocator("broadcast-" + id));
        entries.put(id, entry);
        found = null;
      } else {
        found = entry.state;
        if (found == State.RETAINED) {
          // Held again: its bytes are the tasks' from here, no longer storage memory's.
          leaveRetained(entry);
          entry.moveTo(State.SHARED);
        }
      }
      // The decoding task, a task reading a shared entry, and a task waiting for a decode all
      // hold the entry from here: none of them can free it under another.
      hold(entry);
    }
    free(evicted);
    // Outside the monitor: the task's listener registration is foreign code.
    Hold hold = new Hold(entry, task);
    task.onCompletion(hold::finish);
    if (found == null) {
      return decodeShared(hold, source, task);
    }
    if (found == State.RETAINED) {
      counters.retainedReads.incrementAndGet();
      DecodeLog.retainedRead(id, task);
      return hold.attach(BroadcastReader.Served.RETAINED, 0, 0);
    }
    if (found == State.SHARED) {
      counters.sharedReads.incrementAndGet();
      DecodeLog.sharedRead(id, task);
      return hold.attach(BroadcastReader.Served.SHARED, 0, 0);
    }
    counters.waits.incrementAndGet();
    DecodeLog.waiting(id, task);
    boolean shareable;
    long waitStart = System.nanoTime();
    long waited = 0;
    try {
      shareable = KillableWait.await(entry.outcome, task, () -> "broadcast " + id + " to decode");
    } catch (IOException | RuntimeException | Error e) {
      hold.finish();
      throw e;
    } finally {
      waited = System.nanoTime() - waitStart;
      counters.waitNanos.addAndGet(waited);
    }
    if (shareable) {
      counters.sharedReads.incrementAndGet();
      DecodeLog.sharedRead(id, task);
      return hold.attach(BroadcastReader.Served.SHARED, 0, waited);
    }
    // Failed or not shareable: let go of it now, and decode for this task alone.
    DecodeLog.PrivateReason reason;
    synchronized (this) {
      reason =
          entry.state == State.FAILED
              ? DecodeLog.PrivateReason.SHARED_DECODE_FAILED
              : DecodeLog.PrivateReason.DICTIONARIES;
    }
    hold.finish();
    return decodePrivately(source, task, reason, waited);
  }

  /** What the cache holds now. */
  public synchronized CacheSnapshot snapshot() {
    List<CacheSnapshot.EntryState> states = new ArrayList<>(entries.size());
    for (Entry e : entries.values()) {
      states.add(
          new CacheSnapshot.EntryState(
              e.broadcastId,
              e.state == State.SHARED || e.state == State.RETAINED,
              e.state == State.RETAINED,
              e.holders(),
              bytesOf(e)));
    }
    return new CacheSnapshot(states, allocator.getAllocatedMemory());
  }

  /**
   * Says that broadcast {@code broadcastId} is gone (unpersisted or destroyed): its entry, if idle,
   * is freed now; if held, it is freed by its last holder instead of retained.
   */
  public void drop(long broadcastId) {
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      Entry entry = entries.get(broadcastId);
      if (entry == null) {
        return;
      }
      if (entry.state == State.RETAINED) {
        evict(entry, Eviction.DROPPED, evicted);
      } else {
        entry.dropped = true;
      }
    }
    free(evicted);
  }

  /**
   * Frees the idle entries whose broadcast is no longer live, then, while the storage memory is
   * under pressure, the idle entries least recently used first. The cache does this at each open
   * and at the end of each hold; an engine may call it at other task ends too.
   */
  public void checkRetained() {
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      evictDroppedAndPressed(evicted);
    }
    free(evicted);
  }

  /**
   * Frees every idle entry and retains nothing from now on. Entries that tasks still hold are freed
   * when their last holder completes; the cache still serves opens, without retention.
   */
  public void close() {
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      closed = true;
      while (!retained.isEmpty()) {
        evict(retained.values().iterator().next(), Eviction.CLOSED, evicted);
      }
    }
    free(evicted);
  }

  /** Running totals since the cache was made. */
  public CacheCounters counters() {
    return counters;
  }

  /**
   * {@link BroadcastReader#derived(Object, Derivation)} for a task holding {@code entry}: reuses
   * the entry's value for {@code key}, waits for the task building it, or builds it.
   */
  private <T> T derive(
      Entry entry, TaskScope task, BroadcastReader asker, Object key, Derivation<T> derivation)
      throws IOException {
    synchronized (this) {
      // Held once more while building or waiting: the task's own hold may end meanwhile (its
      // completion on another thread), and the entry must not go under the build.
      hold(entry);
    }
    try {
      while (true) {
        DerivedSlot slot;
        DerivedState found;
        synchronized (this) {
          slot = entry.derived.get(key);
          if (slot == null) {
            slot = new DerivedSlot(entry.nextDerivedNumber++);
            entry.derived.put(key, slot);
            found = null;
          } else {
            found = slot.state;
          }
        }
        if (found == null) {
          return build(entry, slot, key, task, asker, derivation);
        }
        if (found == DerivedState.READY) {
          return reuse(entry, slot, key, task);
        }
        counters.waits.incrementAndGet();
        DecodeLog.derivedWaiting(entry.broadcastId, key, task);
        boolean ready;
        long waitStart = System.nanoTime();
        try {
          ready =
              KillableWait.await(
                  slot.outcome,
                  task,
                  () -> "broadcast " + entry.broadcastId + "'s derived value " + key);
        } finally {
          long waited = System.nanoTime() - waitStart;
          counters.waitNanos.addAndGet(waited);
          asker.addWaitNanos(waited);
        }
        if (ready) {
          return reuse(entry, slot, key, task);
        }
        // The build failed, and its slot is gone: ask again; one of the waiters builds.
      }
    } finally {
      release(entry);
    }
  }

  /** Builds {@code slot}'s value, outside the monitor, as its builder. */
  private <T> T build(
      Entry entry,
      DerivedSlot slot,
      Object key,
      TaskScope task,
      BroadcastReader asker,
      Derivation<T> derivation)
      throws IOException {
    long start = System.nanoTime();
    BufferAllocator valueAllocator =
        entry.allocator.newChildAllocator(
            entry.allocator.getName() + "-derived-" + slot.number, 0, Long.MAX_VALUE);
    DerivedValue<T> built = null;
    try {
      // It tells what the asking task's open cost: the build is that task's.
      try (BroadcastReader buildReader =
          new BroadcastReader(
              entry.decoded,
              entry.allocator,
              BroadcastReader.NO_DERIVED_VALUES,
              asker.served(),
              asker.decodeNanos(),
              asker.waitNanos())) {
        built = derivation.build(buildReader, valueAllocator);
      }
      Preconditions.checkState(built != null, "derivation %s returned no value", key);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDerivations.incrementAndGet();
      synchronized (this) {
        slot.moveTo(DerivedState.FAILED);
        entry.derived.remove(key, slot);
      }
      // A value built before the build reader failed to close goes too.
      AutoCloseables.close(e, built, valueAllocator);
      slot.outcome.complete(false);
      DecodeLog.failedDerivation(entry.broadcastId, key, task, start, e);
      throw e;
    }
    boolean shared;
    synchronized (this) {
      slot.value = built;
      slot.allocator = valueAllocator;
      slot.moveTo(DerivedState.READY);
      entry.derivedHeapBytes += built.heapBytes();
      counters.derivedHeapBytes.addAndGet(built.heapBytes());
      shared = entry.state != State.PRIVATE;
    }
    counters.derivedBuilds.incrementAndGet();
    slot.outcome.complete(true);
    DecodeLog.derivedBuilt(
        entry.broadcastId,
        key,
        task,
        shared,
        start,
        valueAllocator.getAllocatedMemory(),
        built.heapBytes());
    return built.value();
  }

  /** The READY value of {@code slot}, which cannot close while this task holds its entry. */
  private <T> T reuse(Entry entry, DerivedSlot slot, Object key, TaskScope task) {
    DerivedValue<?> value;
    synchronized (this) {
      Preconditions.checkState(slot.state == DerivedState.READY, "reusing a %s value", slot.state);
      value = slot.value;
    }
    counters.derivedReuses.incrementAndGet();
    DecodeLog.derivedReused(entry.broadcastId, key, task);
    @SuppressWarnings("unchecked")
    T typed = (T) value.value();
    return typed;
  }

  /**
   * An entry's bytes: its allocator's (decoded batches, views, derived values' Arrow memory) and
   * its derived values' heap bytes. Under the monitor.
   */
  private static long bytesOf(Entry entry) {
    return entry.allocator.getAllocatedMemory() + entry.derivedHeapBytes;
  }

  private BroadcastReader decodeShared(Hold hold, BroadcastSource source, TaskScope task)
      throws IOException {
    Entry entry = hold.entry;
    long start = System.nanoTime();
    DecodedBroadcast decoded;
    try {
      decoded = decoder.decode(source, entry.allocator);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      int waiting;
      synchronized (this) {
        entry.moveTo(State.FAILED);
        entries.remove(entry.broadcastId, entry);
        waiting = entry.holders() - 1;
      }
      // The waiters' holds end with nothing to free: the allocator goes now.
      AutoCloseables.close(e, entry.allocator);
      entry.outcome.complete(false);
      hold.finish();
      DecodeLog.failedDecode(source, task, start, waiting, e);
      throw e;
    }
    long decodeNanos = System.nanoTime() - start;
    long bytes = entry.allocator.getAllocatedMemory();
    counters.decodes.incrementAndGet();
    boolean shareable = !decoded.hasDictionaries();
    synchronized (this) {
      entry.decoded = decoded;
      if (shareable) {
        entry.moveTo(State.SHARED);
      } else {
        // Kept by this task alone; the waiters let go and decode for themselves.
        entry.moveTo(State.PRIVATE);
        entries.remove(entry.broadcastId, entry);
      }
    }
    entry.outcome.complete(shareable);
    if (shareable) {
      DecodeLog.sharedDecode(source, task, start, bytes);
    } else {
      DecodeLog.privateDecode(
          source, task, DecodeLog.PrivateReason.DICTIONARIES_FOUND, start, bytes);
    }
    return hold.attach(BroadcastReader.Served.DECODED, decodeNanos, 0);
  }

  /**
   * @param waitNanos what this task waited before, for a shared decode it could not read
   */
  private BroadcastReader decodePrivately(
      BroadcastSource source, TaskScope task, DecodeLog.PrivateReason reason, long waitNanos)
      throws IOException {
    Entry entry =
        new Entry(
            source.broadcastId(),
            newEntryAllocator("broadcast-" + source.broadcastId() + "-task-" + task.attemptId()));
    long start = System.nanoTime();
    try {
      entry.decoded = decoder.decode(source, entry.allocator);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      AutoCloseables.close(e, entry.allocator);
      DecodeLog.failedDecode(source, task, start, 0, e);
      throw e;
    }
    long decodeNanos = System.nanoTime() - start;
    counters.privateDecodes.incrementAndGet();
    DecodeLog.privateDecode(source, task, reason, start, entry.allocator.getAllocatedMemory());
    synchronized (this) {
      entry.moveTo(State.PRIVATE);
      hold(entry);
    }
    Hold hold = new Hold(entry, task);
    task.onCompletion(hold::finish);
    return hold.attach(BroadcastReader.Served.PRIVATE, decodeNanos, waitNanos);
  }

  /**
   * Ends one hold on {@code entry}. The last hold on a shared entry retains it if it may, and
   * otherwise frees it, as the last hold on a private one does.
   */
  private void release(Entry entry) {
    List<Evicted> evicted = new ArrayList<>();
    boolean freeEntry = false;
    long bytes = 0;
    synchronized (this) {
      if (letGo(entry) == 0) {
        if (entry.state == State.FAILED) {
          entries.remove(entry.broadcastId, entry);
        } else if (entry.state != State.SHARED || !retain(entry, evicted)) {
          entries.remove(entry.broadcastId, entry);
          entry.moveTo(State.RELEASED);
          freeEntry = true;
          bytes = bytesOf(entry);
        }
      }
      evictDroppedAndPressed(evicted);
    }
    if (freeEntry) {
      closeEntry(entry);
      DecodeLog.released(entry.broadcastId, bytes);
    }
    free(evicted);
  }

  /**
   * Keeps an idle shared entry as RETAINED if the broadcast lives and its bytes fit, evicting idle
   * entries for the budget, and are granted by the storage memory. Under the monitor.
   *
   * @return false if the entry is to be freed
   */
  private boolean retain(Entry entry, List<Evicted> evicted) {
    if (!retention.enabled() || closed) {
      return false;
    }
    long id = entry.broadcastId;
    long bytes = bytesOf(entry);
    String refusal = null;
    if (entry.dropped || !retention.isLive(id)) {
      refusal = "the broadcast is no longer live";
    } else if (bytes > retention.maxBytes()) {
      refusal = "it is larger than the retention budget of " + retention.maxBytes() + " bytes";
    } else {
      while (counters.bytesRetained.get() + bytes > retention.maxBytes()) {
        evict(retained.values().iterator().next(), Eviction.BUDGET, evicted);
      }
      if (!retention.memory().tryAcquire(id, bytes)) {
        refusal = "the storage memory has no room for its " + bytes + " bytes";
      }
    }
    if (refusal != null) {
      DecodeLog.notRetained(id, refusal);
      return false;
    }
    entry.moveTo(State.RETAINED);
    entry.retainedBytes = bytes;
    retained.put(id, entry);
    counters.entriesRetained.incrementAndGet();
    long total = counters.bytesRetained.addAndGet(bytes);
    DecodeLog.retained(id, bytes, total);
    return true;
  }

  /** An idle entry leaves the retained ones (its storage memory goes back). Under the monitor. */
  private void leaveRetained(Entry entry) {
    retained.remove(entry.broadcastId);
    counters.entriesRetained.decrementAndGet();
    counters.bytesRetained.addAndGet(-entry.retainedBytes);
    retention.memory().release(entry.broadcastId, entry.retainedBytes);
  }

  /** Evicts the idle {@code entry}; {@link #free} frees it after the monitor. Under the monitor. */
  private void evict(Entry entry, Eviction cause, List<Evicted> evicted) {
    leaveRetained(entry);
    entries.remove(entry.broadcastId, entry);
    entry.moveTo(State.RELEASED);
    counters.countEviction(cause);
    evicted.add(new Evicted(entry, cause));
  }

  /** The checks of each open and each hold's end (see {@link #checkRetained()}). */
  private void evictDroppedAndPressed(List<Evicted> evicted) {
    if (retained.isEmpty()) {
      return;
    }
    for (Entry entry : new ArrayList<>(retained.values())) {
      if (!retention.isLive(entry.broadcastId)) {
        evict(entry, Eviction.DROPPED, evicted);
      }
    }
    while (!retained.isEmpty() && retention.memory().underPressure()) {
      evict(retained.values().iterator().next(), Eviction.PRESSURE, evicted);
    }
  }

  /** Frees evicted entries, outside the monitor. */
  private void free(List<Evicted> evicted) {
    for (Evicted e : evicted) {
      closeEntry(e.entry);
      DecodeLog.evicted(e.entry.broadcastId, e.entry.retainedBytes, e.cause);
    }
  }

  /**
   * Frees an entry no task holds and the cache no longer lists (so, outside the monitor): its
   * derived values (each release, then its allocator), its decoded buffers, its allocator. A
   * release that throws is logged and does not keep the rest from being freed.
   */
  private void closeEntry(Entry entry) {
    RuntimeException failure = null;
    for (Map.Entry<Object, DerivedSlot> derived : entry.derived.entrySet()) {
      DerivedSlot slot = derived.getValue();
      slot.moveTo(DerivedState.CLOSED);
      try {
        slot.value.close();
      } catch (RuntimeException e) {
        DecodeLog.derivedReleaseFailed(entry.broadcastId, derived.getKey(), e);
      }
      counters.derivedHeapBytes.addAndGet(-slot.value.heapBytes());
      try {
        slot.allocator.close();
      } catch (RuntimeException e) {
        // Memory the release did not free: loud, as a leaked view would be.
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    entry.derived.clear();
    try {
      entry.close();
    } catch (RuntimeException e) {
      if (failure == null) {
        failure = e;
      } else {
        failure.addSuppressed(e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void hold(Entry entry) {
    if (entry.hold() == 1) {
      counters.entriesHeld.incrementAndGet();
    }
  }

  private int letGo(Entry entry) {
    int left = entry.letGo();
    if (left == 0) {
      counters.entriesHeld.decrementAndGet();
    }
    return left;
  }

  /** Why an idle retained entry was freed. */
  enum Eviction {
    BUDGET("to make room in the retention budget"),
    PRESSURE("the storage memory is under pressure"),
    DROPPED("the broadcast is no longer live"),
    CLOSED("the cache is closed");

    final String why;

    Eviction(String why) {
      this.why = why;
    }
  }

  /** An entry evicted under the monitor, to free after it. */
  private static final class Evicted {
    final Entry entry;
    final Eviction cause;

    Evicted(Entry entry, Eviction cause) {
      this.entry = entry;
      this.cause = cause;
    }
  }

  /**
   * One task's hold on an entry, from the moment it arrives: ended once, by the task's completion
   * or earlier (a waiter that will not share the entry), closing the task's reader first.
   */
  private final class Hold implements BroadcastReader.DerivedValues {
    final Entry entry;
    private final TaskScope task;
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile BroadcastReader reader;

    Hold(Entry entry, TaskScope task) {
      this.entry = entry;
      this.task = task;
    }

    /**
     * The task's reader on the now decoded entry, closed when the hold ends, telling how its open
     * was served and what it cost.
     */
    BroadcastReader attach(BroadcastReader.Served served, long decodeNanos, long waitNanos) {
      BroadcastReader attached =
          new BroadcastReader(entry.decoded, entry.allocator, this, served, decodeNanos, waitNanos);
      reader = attached;
      return attached;
    }

    @Override
    public <T> T derived(Object key, Derivation<T> derivation) throws IOException {
      return derive(entry, task, reader, key, derivation);
    }

    void finish() {
      if (finished.compareAndSet(false, true)) {
        BroadcastReader attached = reader;
        if (attached != null) {
          attached.close();
        }
        release(entry);
      }
    }
  }

  private BufferAllocator newEntryAllocator(String name) {
    return allocator.newChildAllocator(name, 0, maxEntryBytes);
  }

  /**
   * The life of an entry. A shared one: DECODING, then SHARED (or FAILED, or PRIVATE when its
   * streams carry dictionaries). At its last holder a SHARED entry becomes RETAINED (idle, its
   * bytes in the storage memory) or RELEASED. A RETAINED entry becomes SHARED again when a task
   * opens it, or RELEASED when evicted. A private one (sharing off, or after a failed or
   * unshareable shared decode): PRIVATE, then RELEASED.
   */
  enum State {
    DECODING,
    SHARED,
    RETAINED,
    PRIVATE,
    FAILED,
    RELEASED;

    boolean canMoveTo(State next) {
      switch (this) {
        case DECODING:
          return next == SHARED || next == PRIVATE || next == FAILED;
        case SHARED:
          return next == RETAINED || next == RELEASED;
        case RETAINED:
          return next == SHARED || next == RELEASED;
        case PRIVATE:
          return next == RELEASED;
        default:
          return false;
      }
    }
  }

  /**
   * The life of one derived value: BUILDING by the task that asked first, then READY (shared as its
   * entry is) or FAILED (gone from its entry, so the next task to ask builds anew). A READY value
   * becomes CLOSED when its entry is freed; its entry, held by its builder, cannot go while it is
   * BUILDING.
   */
  enum DerivedState {
    BUILDING,
    READY,
    FAILED,
    CLOSED;

    boolean canMoveTo(DerivedState next) {
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

  /** One key's derived value of an entry. Guarded by the cache's monitor. */
  private static final class DerivedSlot {
    /** Numbers the value's allocator within its entry. */
    final int number;

    /** Completes when the build ends: true if the value is READY, false if the build failed. */
    final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

    DerivedState state = DerivedState.BUILDING;

    DerivedValue<?> value;
    BufferAllocator allocator;

    DerivedSlot(int number) {
      this.number = number;
    }

    void moveTo(DerivedState next) {
      if (!state.canMoveTo(next)) {
        throw new IllegalStateException(
            "derived value " + number + " cannot move from " + state + " to " + next);
      }
      state = next;
    }
  }

  /** One broadcast's decoded value and the tasks holding it. Guarded by the cache's monitor. */
  private static final class Entry {
    final long broadcastId;
    final BufferAllocator allocator;

    /** Completes when the decode ends: true if the entry is now shared, false otherwise. */
    final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

    State state = State.DECODING;
    DecodedBroadcast decoded;
    private int holders;

    /** Set by {@link DecodedBroadcastCache#drop(long)}: freed, not retained, at its last holder. */
    boolean dropped;

    /** The bytes acquired from the storage memory while RETAINED. */
    long retainedBytes;

    /** Its derived values by key; changed only while a task holds the entry. */
    final Map<Object, DerivedSlot> derived = new HashMap<>();

    /** The heap bytes of its READY derived values. */
    long derivedHeapBytes;

    int nextDerivedNumber;

    Entry(long broadcastId, BufferAllocator allocator) {
      this.broadcastId = broadcastId;
      this.allocator = allocator;
    }

    void moveTo(State next) {
      if (!state.canMoveTo(next)) {
        throw new IllegalStateException(
            "broadcast " + broadcastId + ": entry cannot move from " + state + " to " + next);
      }
      state = next;
    }

    /** Takes one hold; returns the holds now. */
    int hold() {
      if (state == State.RELEASED || state == State.FAILED || state == State.RETAINED) {
        throw new IllegalStateException(
            "broadcast " + broadcastId + ": a hold on a " + state + " entry");
      }
      return ++holders;
    }

    /** Ends one hold; returns the holds left. */
    int letGo() {
      if (holders <= 0) {
        throw new IllegalStateException("broadcast " + broadcastId + ": more releases than holds");
      }
      return --holders;
    }

    int holders() {
      return holders;
    }

    /** Frees the decoded buffers (if any) and the allocator, its derived values already closed. */
    void close() {
      if (decoded != null) {
        decoded.close();
      }
      allocator.close();
    }
  }

  /** Counts of what the cache has done, for tests and metrics. */
  public static final class CacheCounters {
    final AtomicLong decodes = new AtomicLong();
    final AtomicLong privateDecodes = new AtomicLong();
    final AtomicLong sharedReads = new AtomicLong();
    final AtomicLong retainedReads = new AtomicLong();
    final AtomicLong waits = new AtomicLong();
    final AtomicLong waitNanos = new AtomicLong();
    final AtomicLong failedDecodes = new AtomicLong();
    final AtomicLong budgetEvictions = new AtomicLong();
    final AtomicLong pressureEvictions = new AtomicLong();
    final AtomicLong droppedEvictions = new AtomicLong();
    final AtomicLong closedEvictions = new AtomicLong();
    final AtomicLong derivedBuilds = new AtomicLong();
    final AtomicLong derivedReuses = new AtomicLong();
    final AtomicLong failedDerivations = new AtomicLong();
    // Gauges, changed under the cache's monitor.
    final AtomicLong entriesHeld = new AtomicLong();
    final AtomicLong entriesRetained = new AtomicLong();
    final AtomicLong bytesRetained = new AtomicLong();

    /** Heap bytes of every derived value not yet closed, held or retained. */
    final AtomicLong derivedHeapBytes = new AtomicLong();

    private final BufferAllocator cacheAllocator;

    CacheCounters(BufferAllocator cacheAllocator) {
      this.cacheAllocator = cacheAllocator;
    }

    void countEviction(Eviction cause) {
      switch (cause) {
        case BUDGET:
          budgetEvictions.incrementAndGet();
          break;
        case PRESSURE:
          pressureEvictions.incrementAndGet();
          break;
        case DROPPED:
          droppedEvictions.incrementAndGet();
          break;
        case CLOSED:
          closedEvictions.incrementAndGet();
          break;
      }
    }

    /** Successful decodes into a shared entry (including one later found to carry dictionaries). */
    public long decodes() {
      return decodes.get();
    }

    /** Successful decodes for one task alone: sharing off, after a failed or unshareable decode. */
    public long privateDecodes() {
      return privateDecodes.get();
    }

    /** Reads that took a hold on an entry another running task decoded or holds. */
    public long sharedReads() {
      return sharedReads.get();
    }

    /** Reads served from an idle retained entry, without decoding (not in {@link #sharedReads}). */
    public long retainedReads() {
      return retainedReads.get();
    }

    /** Times a task waited for another task's decode or derived value. */
    public long waits() {
      return waits.get();
    }

    /** Nanoseconds tasks spent waiting for other tasks' decodes and derived values, in all. */
    public long waitNanos() {
      return waitNanos.get();
    }

    public long failedDecodes() {
      return failedDecodes.get();
    }

    /** Derived values built: one per entry and key, for shared entries and private ones. */
    public long derivedBuilds() {
      return derivedBuilds.get();
    }

    /** Times a task got a derived value another task (or itself, earlier) had built. */
    public long derivedReuses() {
      return derivedReuses.get();
    }

    /** Builds of derived values that threw (not cached; the next task to ask builds again). */
    public long failedDerivations() {
      return failedDerivations.get();
    }

    /** Idle entries evicted to make room for another in the retention budget. */
    public long budgetEvictions() {
      return budgetEvictions.get();
    }

    /** Idle entries evicted because the storage memory was under pressure. */
    public long pressureEvictions() {
      return pressureEvictions.get();
    }

    /** Idle entries evicted because their broadcast was no longer live. */
    public long droppedEvictions() {
      return droppedEvictions.get();
    }

    /** Idle entries evicted by {@link DecodedBroadcastCache#close()}. */
    public long closedEvictions() {
      return closedEvictions.get();
    }

    /** Gauge: entries (shared or private) that running tasks hold now, decoding ones included. */
    public long entriesHeld() {
      return entriesHeld.get();
    }

    /**
     * Gauge: bytes of the entries tasks hold (their views and derived values, heap bytes included):
     * all the cache's bytes but the retained ones.
     */
    public long bytesHeld() {
      return Math.max(
          0, cacheAllocator.getAllocatedMemory() + derivedHeapBytes.get() - bytesRetained.get());
    }

    /** Gauge: idle retained entries now. */
    public long entriesRetained() {
      return entriesRetained.get();
    }

    /**
     * Gauge: bytes of the idle retained entries (derived values' heap bytes included), as acquired
     * from the storage memory.
     */
    public long bytesRetained() {
      return bytesRetained.get();
    }
  }
}
