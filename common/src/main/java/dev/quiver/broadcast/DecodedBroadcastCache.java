package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 *       decoding task cannot free it under them) and wait for it, checking every {@link
 *       #KILL_CHECK_MILLIS} ms whether they were killed.
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
 * </ul>
 *
 * <p>State changes happen under one monitor in short critical sections; decoding and waiting happen
 * outside it. {@link Retention}'s liveness test and its {@link StorageMemory} are called under the
 * monitor, so that what is retained and what is acquired always agree: they must not call back into
 * the cache.
 */
@Public
public final class DecodedBroadcastCache {

  /** How often a task waiting on another task's decode checks whether it was killed. */
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
      return decodePrivately(source, task, DecodeLog.PrivateReason.SHARING_OFF);
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
    Hold hold = new Hold(entry);
    task.onCompletion(hold::finish);
    if (found == null) {
      return decodeShared(hold, source, task);
    }
    if (found == State.RETAINED) {
      counters.retainedReads.incrementAndGet();
      DecodeLog.retainedRead(id, task);
      return hold.attach();
    }
    if (found == State.SHARED) {
      counters.sharedReads.incrementAndGet();
      DecodeLog.sharedRead(id, task);
      return hold.attach();
    }
    counters.waits.incrementAndGet();
    DecodeLog.waiting(id, task);
    boolean shareable;
    long waitStart = System.nanoTime();
    try {
      shareable = awaitShareable(entry.outcome, task, id);
    } catch (IOException | RuntimeException | Error e) {
      hold.finish();
      throw e;
    } finally {
      counters.waitNanos.addAndGet(System.nanoTime() - waitStart);
    }
    if (shareable) {
      counters.sharedReads.incrementAndGet();
      DecodeLog.sharedRead(id, task);
      return hold.attach();
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
    return decodePrivately(source, task, reason);
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
              e.allocator.getAllocatedMemory()));
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
    return hold.attach();
  }

  private BroadcastReader decodePrivately(
      BroadcastSource source, TaskScope task, DecodeLog.PrivateReason reason) throws IOException {
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
    counters.privateDecodes.incrementAndGet();
    DecodeLog.privateDecode(source, task, reason, start, entry.allocator.getAllocatedMemory());
    synchronized (this) {
      entry.moveTo(State.PRIVATE);
      hold(entry);
    }
    Hold hold = new Hold(entry);
    task.onCompletion(hold::finish);
    return hold.attach();
  }

  /**
   * Ends one hold on {@code entry}. The last hold on a shared entry retains it if it may, and
   * otherwise frees it, as the last hold on a private one does.
   */
  private void release(Entry entry) {
    List<Evicted> evicted = new ArrayList<>();
    boolean freeEntry = false;
    synchronized (this) {
      if (letGo(entry) == 0) {
        if (entry.state == State.FAILED) {
          entries.remove(entry.broadcastId, entry);
        } else if (entry.state != State.SHARED || !retain(entry, evicted)) {
          entries.remove(entry.broadcastId, entry);
          entry.moveTo(State.RELEASED);
          freeEntry = true;
        }
      }
      evictDroppedAndPressed(evicted);
    }
    if (freeEntry) {
      long bytes = entry.allocator.getAllocatedMemory();
      entry.close();
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
    long bytes = entry.allocator.getAllocatedMemory();
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
  private static void free(List<Evicted> evicted) {
    for (Evicted e : evicted) {
      e.entry.close();
      DecodeLog.evicted(e.entry.broadcastId, e.entry.retainedBytes, e.cause);
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
  private final class Hold {
    final Entry entry;
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile BroadcastReader reader;

    Hold(Entry entry) {
      this.entry = entry;
    }

    /** The task's reader on the now decoded entry, closed when the hold ends. */
    BroadcastReader attach() {
      BroadcastReader attached = new BroadcastReader(entry.decoded, entry.allocator);
      reader = attached;
      return attached;
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

  /**
   * Waits for another task's decode. Returns true if it produced a shareable entry, false if it
   * failed or is not shareable (the caller then decodes for itself).
   */
  private boolean awaitShareable(CompletableFuture<Boolean> outcome, TaskScope task, long id)
      throws IOException {
    while (true) {
      try {
        return outcome.get(KILL_CHECK_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        task.throwIfKilled();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        task.throwIfKilled();
        InterruptedIOException interrupted =
            new InterruptedIOException("interrupted waiting for broadcast " + id + " to decode");
        interrupted.initCause(e);
        throw interrupted;
      } catch (ExecutionException e) {
        // Never completed exceptionally; kept for the compiler.
        return false;
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

    /** Frees the decoded buffers (if any) and the allocator. */
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
    // Gauges, changed under the cache's monitor.
    final AtomicLong entriesHeld = new AtomicLong();
    final AtomicLong entriesRetained = new AtomicLong();
    final AtomicLong bytesRetained = new AtomicLong();
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

    /** Times a task waited for another task's decode. */
    public long waits() {
      return waits.get();
    }

    /** Nanoseconds tasks spent waiting for other tasks' decodes, in all. */
    public long waitNanos() {
      return waitNanos.get();
    }

    public long failedDecodes() {
      return failedDecodes.get();
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
     * Gauge: bytes allocated under the cache for entries tasks hold (their views included): all the
     * cache's bytes but the retained ones.
     */
    public long bytesHeld() {
      return Math.max(0, cacheAllocator.getAllocatedMemory() - bytesRetained.get());
    }

    /** Gauge: idle retained entries now. */
    public long entriesRetained() {
      return entriesRetained.get();
    }

    /** Gauge: bytes of the idle retained entries, as acquired from the storage memory. */
    public long bytesRetained() {
      return bytesRetained.get();
    }
  }
}
