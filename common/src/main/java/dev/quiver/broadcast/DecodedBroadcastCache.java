package dev.quiver.broadcast;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 *   <li>Each task reads its own views, of batches and dictionaries (see {@link BroadcastReader});
 *       its hold on the entry ends when the task completes. Without retention the entry is freed
 *       when its last holder completes, and a later task decodes again.
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
 *   <li>Arrow IPC forms are shared, dictionaries too; a form that cannot be ({@link
 *       DecodedForm#whyNotShared()}) stays with the task that decoded it, the others decode alone.
 *   <li>With sharing off a task decodes for itself, through the same reader.
 *   <li>Each open that returns a reader is counted once in {@link CacheCounters}, as its reader's
 *       {@link BroadcastReader#served()} says; the reader's decode and wait times are this task's
 *       share of the counters' (see {@link BroadcastReader.Served}).
 * </ul>
 *
 * <p>Derived values ({@link BroadcastReader#derived(Object, Derivation)}), each rule broken on
 * purpose by a test too:
 *
 * <ul>
 *   <li>An entry has at most one value per key (compared by {@code equals}); different keys of one
 *       entry are separate values, built and freed separately.
 *   <li>The first task to ask for a key builds its value, outside every monitor, from a fresh
 *       reader of its own and into a child allocator of the entry's. Tasks asking meanwhile wait,
 *       and a killed waiter stops as a killed decode waiter does (the build goes on). Later tasks
 *       reuse the value. While a task builds or waits it holds the entry once more, so the entry
 *       cannot go under the build even if the task's own hold ends meanwhile.
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
 *   <li>A retained entry keeps its decoded batches beside its values (which may keep positions into
 *       the batches rather than copies), and its bytes are their sum.
 *   <li>On a private entry (sharing off, an unshareable form, after a failed shared decode) a value
 *       is built for that task alone and closed with the entry when the task's hold ends.
 *   <li>Waits for a derived value count in {@link CacheCounters#waits()} and {@link
 *       CacheCounters#waitNanos()} with waits for a decode, and in the waiting task's {@link
 *       BroadcastReader#waitNanos()}.
 * </ul>
 *
 * <p>Locking: the cache's monitor guards which entries exist and which are retained; each entry's
 * own monitor guards its state and holds, and each entry's derived values guard theirs. Locks are
 * taken in that order only, in short critical sections; decoding, building and waiting happen
 * outside all of them. {@link Retention}'s liveness test and its {@link StorageMemory} are called
 * under the cache's monitor, so that what is retained and what is acquired always agree: they must
 * not call back into the cache. The fields each monitor guards say so ({@code GuardedBy}), and
 * Error Prone checks that every access holds its monitor; the order of the monitors, and that an
 * entry moves only under the cache's monitor too, are kept by this class and model-checked.
 */
@Public
public final class DecodedBroadcastCache {

  /**
   * How often a task waiting on another task's work checks whether it was killed, where its engine
   * does not tell of kills ({@link TaskScope#onKill(Runnable)}).
   */
  public static final long KILL_CHECK_MILLIS = 100;

  private final BufferAllocator allocator;
  private final BroadcastDecoder<?> decoder;
  private final long maxEntryBytes;
  private final Retention retention;
  private final CacheCounters counters;

  /** The shared entries by broadcast and decoder: decoding, shared or retained. */
  @GuardedBy("this")
  private final Map<EntryKey, CacheEntry> entries = new HashMap<>();

  /** The idle retained entries, least recently used first. */
  @GuardedBy("this")
  private final LinkedHashMap<EntryKey, CacheEntry> retained = new LinkedHashMap<>();

  /** The holds readers gave out ({@link BroadcastReader#hold(String)}) and not yet closed. */
  private final Set<BroadcastHold> outstandingHolds = ConcurrentHashMap.newKeySet();

  /** Set by {@link #close()}: from then on nothing is retained. */
  @GuardedBy("this")
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
    this(allocator, BroadcastDecoder.arrowIpc(), maxEntryBytes, retention);
  }

  /** A cache without a bound on one broadcast's decoded bytes (beyond its allocator's). */
  public DecodedBroadcastCache(BufferAllocator allocator) {
    this(allocator, Long.MAX_VALUE);
  }

  /**
   * A cache with another default decoder ({@link #open(BroadcastSource, TaskScope, boolean)}): for
   * tests that script decodes and their failures.
   */
  DecodedBroadcastCache(
      BufferAllocator allocator,
      BroadcastDecoder<?> decoder,
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

  // ---------------------------------------------------------------------------------------------
  // Opening a broadcast

  /** {@link #open(BroadcastSource, BroadcastDecoder, TaskScope, boolean)} as Arrow IPC. */
  public BroadcastReader open(BroadcastSource source, TaskScope task, boolean share)
      throws IOException {
    return open(source, decoder, task, share);
  }

  /**
   * Opens {@code source} for {@code task}, decoded by {@code decoder}: one entry per broadcast and
   * decoder name, by the same rules whatever the decoder. The task holds the entry until it
   * completes, and its reader's current view is closed then too. The reader walks Arrow batches
   * when the form is a {@link DecodedBroadcast}; any form is {@link BroadcastReader#decoded}.
   *
   * @param share false to decode for this task alone (the setting turned off)
   */
  public BroadcastReader open(
      BroadcastSource source, BroadcastDecoder<?> decoder, TaskScope task, boolean share)
      throws IOException {
    Preconditions.checkNotNull(decoder, "decoder");
    if (!share) {
      checkRetained();
      return decodePrivately(source, decoder, task, DecodeLog.PrivateReason.SHARING_OFF, "", 0);
    }
    EntryKey key = new EntryKey(source.broadcastId(), decoder.name());
    long id = key.broadcastId;
    CacheEntry entry;
    Arrival arrival;
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      evictDroppedAndPressed(evicted);
      entry = entries.get(key);
      if (entry == null) {
        entry = new CacheEntry(key, newEntryAllocator(key.allocatorName()), counters);
        entries.put(key, entry);
        arrival = Arrival.DECODE;
      } else {
        arrival = Arrival.at(entry);
        if (arrival == Arrival.READ_RETAINED) {
          // Held again: its bytes are the tasks' from here, no longer storage memory's.
          leaveRetained(entry);
          entry.moveTo(State.SHARED);
        }
      }
      // The decoding task, a task reading a shared entry, and a task waiting for a decode all
      // hold the entry from here: none of them can free it under another.
      hold(entry);
    }
    freeEvicted(evicted);
    // Outside the monitor: the task's listener registration is foreign code.
    TaskHold hold = new TaskHold(this, entry, task);
    task.onCompletion(hold::release);
    switch (arrival) {
      case DECODE:
        return decodeShared(hold, source, decoder, task);
      case READ_RETAINED:
        counters.retainedReads.incrementAndGet();
        DecodeLog.retainedRead(id, task);
        return hold.attach(BroadcastReader.Served.RETAINED, 0, 0);
      case READ_SHARED:
        counters.sharedReads.incrementAndGet();
        DecodeLog.sharedRead(id, task);
        return hold.attach(BroadcastReader.Served.SHARED, 0, 0);
      case WAIT:
        return awaitDecode(hold, source, decoder, task);
      default:
        throw new AssertionError(arrival);
    }
  }

  private BroadcastReader decodeShared(
      TaskHold hold, BroadcastSource source, BroadcastDecoder<?> decoder, TaskScope task)
      throws IOException {
    CacheEntry entry = hold.entry;
    long start = System.nanoTime();
    DecodedForm decoded;
    try {
      decoded = decodeInto(entry, source, decoder);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      int waiting;
      synchronized (this) {
        entry.moveTo(State.FAILED);
        entries.remove(entry.key, entry);
        waiting = entry.holders() - 1;
      }
      // The waiters' holds end with nothing to free: the allocator goes now.
      AutoCloseables.close(e, entry.allocator);
      entry.outcome.complete(false);
      hold.release();
      DecodeLog.failedDecode(source, task, start, waiting, e);
      throw e;
    }
    long decodeNanos = System.nanoTime() - start;
    long bytes = entry.bytes().total();
    counters.decodes.incrementAndGet();
    Optional<String> whyNotShared = decoded.whyNotShared();
    boolean shareable = whyNotShared.isEmpty();
    synchronized (this) {
      if (shareable) {
        entry.moveTo(State.SHARED);
      } else {
        // Kept by this task alone; the waiters release it and decode for themselves.
        entry.moveTo(State.PRIVATE);
        entries.remove(entry.key, entry);
      }
    }
    entry.outcome.complete(shareable);
    if (shareable) {
      DecodeLog.sharedDecode(source, task, start, bytes);
    } else {
      DecodeLog.privateDecode(
          source,
          task,
          DecodeLog.PrivateReason.NOT_SHAREABLE_FOUND,
          whyNotShared.get(),
          start,
          bytes);
    }
    return hold.attach(BroadcastReader.Served.DECODED, decodeNanos, 0);
  }

  /** Waits for another task's decode, holding the entry; decodes privately if it cannot share. */
  private BroadcastReader awaitDecode(
      TaskHold hold, BroadcastSource source, BroadcastDecoder<?> decoder, TaskScope task)
      throws IOException {
    CacheEntry entry = hold.entry;
    counters.waits.incrementAndGet();
    DecodeLog.waiting(entry.broadcastId, task);
    boolean shareable;
    long waitStart = System.nanoTime();
    long waited = 0;
    try {
      shareable =
          KillableWait.await(
              entry.outcome, task, () -> "broadcast " + entry.broadcastId + " to decode");
    } catch (IOException | RuntimeException | Error e) {
      hold.release();
      throw e;
    } finally {
      waited = System.nanoTime() - waitStart;
      counters.waitNanos.addAndGet(waited);
    }
    if (shareable) {
      counters.sharedReads.incrementAndGet();
      DecodeLog.sharedRead(entry.broadcastId, task);
      return hold.attach(BroadcastReader.Served.SHARED, 0, waited);
    }
    // Failed or not shareable: release it now, and decode for this task alone. Read outside the
    // cache's monitor, the state is final: FAILED and PRIVATE move on only at the last release.
    boolean failed = entry.state() == State.FAILED;
    DecodeLog.PrivateReason reason =
        failed
            ? DecodeLog.PrivateReason.SHARED_DECODE_FAILED
            : DecodeLog.PrivateReason.NOT_SHAREABLE;
    String detail = failed ? "" : entry.decoded().whyNotShared().orElse("");
    hold.release();
    return decodePrivately(source, decoder, task, reason, detail, waited);
  }

  /**
   * @param waitNanos what this task waited before, for a shared decode it could not read
   */
  private BroadcastReader decodePrivately(
      BroadcastSource source,
      BroadcastDecoder<?> decoder,
      TaskScope task,
      DecodeLog.PrivateReason reason,
      String detail,
      long waitNanos)
      throws IOException {
    EntryKey key = new EntryKey(source.broadcastId(), decoder.name());
    CacheEntry entry =
        new CacheEntry(
            key, newEntryAllocator(key.allocatorName() + "-task-" + task.attemptId()), counters);
    long start = System.nanoTime();
    try {
      decodeInto(entry, source, decoder);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      AutoCloseables.close(e, entry.allocator);
      DecodeLog.failedDecode(source, task, start, 0, e);
      throw e;
    }
    long decodeNanos = System.nanoTime() - start;
    counters.privateDecodes.incrementAndGet();
    DecodeLog.privateDecode(source, task, reason, detail, start, entry.bytes().total());
    synchronized (this) {
      entry.moveTo(State.PRIVATE);
      hold(entry);
    }
    TaskHold hold = new TaskHold(this, entry, task);
    task.onCompletion(hold::release);
    return hold.attach(BroadcastReader.Served.PRIVATE, decodeNanos, waitNanos);
  }

  private BufferAllocator newEntryAllocator(String name) {
    return allocator.newChildAllocator(name, 0, maxEntryBytes);
  }

  /** Decodes {@code source} into {@code entry}, which owns the form from here. */
  private static DecodedForm decodeInto(
      CacheEntry entry, BroadcastSource source, BroadcastDecoder<?> decoder) throws IOException {
    DecodedForm form = decoder.decode(source, entry.allocator);
    if (form == null) {
      throw new IllegalStateException(
          "decoder " + decoder.name() + " returned nothing for broadcast " + entry.broadcastId);
    }
    entry.decoded(form);
    return form;
  }

  /**
   * {@link BroadcastReader#derived(Object, Derivation)} for a task holding {@code entry}: reuses
   * the entry's value for {@code key}, waits for the task building it, or builds it.
   */
  <T> T derive(
      CacheEntry entry, TaskScope task, BroadcastReader asker, Object key, Derivation<T> derivation)
      throws IOException {
    synchronized (this) {
      // Held once more while building or waiting: the task's own hold may end meanwhile (its
      // completion on another thread), and the entry must not go under the build.
      hold(entry);
    }
    try {
      // Held, the entry is SHARED or PRIVATE and stays so: safe outside the cache's monitor.
      boolean shared = entry.state() != State.PRIVATE;
      return entry.derived.get(entry.decoded(), shared, task, asker, key, derivation);
    } finally {
      release(entry);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Holds: taken under the cache's monitor, ended by release

  /** {@link BroadcastReader#hold(String)}: the taker's own hold keeps the entry held till then. */
  BroadcastHold holdFor(CacheEntry entry, TaskHold taker, String holder) {
    synchronized (this) {
      hold(entry);
      entry.holdForConsumer();
    }
    BroadcastHold taken = new BroadcastHold(entry.broadcastId, taker.attemptId(), holder, taker);
    outstandingHolds.add(taken);
    return taken;
  }

  void release(BroadcastHold hold, CacheEntry entry) {
    outstandingHolds.remove(hold);
    release(entry, true);
  }

  /** Takes one hold on {@code entry}. */
  @GuardedBy("this")
  private void hold(CacheEntry entry) {
    if (entry.hold() == 1) {
      counters.entriesHeld.incrementAndGet();
    }
    // Held by a task again, its bytes are the tasks' from here, as a retained entry's would be.
    entry.dischargeTo(retention.memory());
  }

  void release(CacheEntry entry) {
    release(entry, false);
  }

  /**
   * Ends one hold on {@code entry}, a consumer's or a task's. The last hold on a shared entry
   * retains it if it may, and otherwise frees it, as the last hold on a private one does. An entry
   * that consumers alone hold, its tasks gone, is accounted in the storage memory until then.
   */
  private void release(CacheEntry entry, boolean consumer) {
    List<Evicted> evicted = new ArrayList<>();
    boolean free = false;
    long bytes = 0;
    synchronized (this) {
      int left = entry.release(consumer);
      if (left > 0 && entry.onlyConsumersHold() && retention.enabled() && !closed) {
        entry.chargeTo(retention.memory());
      }
      if (left == 0) {
        entry.dischargeTo(retention.memory());
        counters.entriesHeld.decrementAndGet();
        State state = entry.state();
        if (state == State.FAILED) {
          entries.remove(entry.key, entry);
        } else if (state != State.SHARED || !retain(entry, evicted)) {
          entries.remove(entry.key, entry);
          entry.moveTo(State.RELEASED);
          free = true;
          bytes = entry.bytes().total();
        }
      }
      evictDroppedAndPressed(evicted);
    }
    try {
      if (free) {
        entry.free();
        DecodeLog.released(entry.broadcastId, bytes);
      }
    } finally {
      // Unlisted already: freed here or never.
      freeEvicted(evicted);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Retention and eviction

  /**
   * Keeps an idle shared entry as RETAINED if the broadcast lives and its bytes fit, evicting idle
   * entries for the budget, and are granted by the storage memory.
   *
   * @return false if the entry is to be freed
   */
  @GuardedBy("this")
  private boolean retain(CacheEntry entry, List<Evicted> evicted) {
    if (!retention.enabled() || closed) {
      return false;
    }
    long id = entry.broadcastId;
    EntryBytes bytes = entry.bytes();
    String refusal = null;
    if (entry.dropped() || !retention.isLive(id)) {
      refusal = "the broadcast is no longer live";
    } else if (bytes.total() > retention.maxBytes()) {
      refusal = "it is larger than the retention budget of " + retention.maxBytes() + " bytes";
    } else {
      while (counters.bytesRetained.get() + bytes.total() > retention.maxBytes()) {
        evict(retained.values().iterator().next(), Eviction.BUDGET, evicted);
      }
      if (!bytes.acquireFrom(retention.memory(), id)) {
        refusal = "the storage memory has no room for its " + bytes;
      }
    }
    if (refusal != null) {
      DecodeLog.notRetained(id, refusal);
      return false;
    }
    entry.retain(bytes);
    retained.put(entry.key, entry);
    counters.entriesRetained.incrementAndGet();
    long total = counters.bytesRetained.addAndGet(bytes.total());
    DecodeLog.retained(id, bytes.total(), total);
    return true;
  }

  /** An idle entry leaves the retained ones (its storage memory goes back). */
  @GuardedBy("this")
  private void leaveRetained(CacheEntry entry) {
    EntryBytes bytes = entry.retainedBytes();
    retained.remove(entry.key);
    counters.entriesRetained.decrementAndGet();
    counters.bytesRetained.addAndGet(-bytes.total());
    bytes.releaseTo(retention.memory(), entry.broadcastId);
  }

  /** Evicts the idle {@code entry}; {@link #freeEvicted} frees it after the monitor. */
  @GuardedBy("this")
  private void evict(CacheEntry entry, Eviction cause, List<Evicted> evicted) {
    leaveRetained(entry);
    entries.remove(entry.key, entry);
    entry.moveTo(State.RELEASED);
    counters.countEviction(cause);
    evicted.add(new Evicted(entry, cause));
  }

  /** The checks of each open and each hold's end (see {@link #checkRetained()}). */
  @GuardedBy("this")
  private void evictDroppedAndPressed(List<Evicted> evicted) {
    if (retained.isEmpty()) {
      return;
    }
    for (CacheEntry entry : new ArrayList<>(retained.values())) {
      if (!retention.isLive(entry.broadcastId)) {
        evict(entry, Eviction.DROPPED, evicted);
      }
    }
    while (!retained.isEmpty() && retention.memory().underPressure()) {
      evict(retained.values().iterator().next(), Eviction.PRESSURE, evicted);
    }
  }

  /** Frees evicted entries, outside the monitor. */
  private static void freeEvicted(List<Evicted> evicted) {
    RuntimeException failure = null;
    for (Evicted e : evicted) {
      try {
        e.entry.free();
        DecodeLog.evicted(e.entry.broadcastId, e.entry.retainedBytes().total(), e.cause);
      } catch (RuntimeException thrown) {
        // One entry that fails to free does not keep the others allocated.
        failure = DerivedValues.addTo(failure, thrown);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** An entry evicted under the monitor, to free after it. */
  private static final class Evicted {
    final CacheEntry entry;
    final Eviction cause;

    Evicted(CacheEntry entry, Eviction cause) {
      this.entry = entry;
      this.cause = cause;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // What engines call besides open

  /** What the cache holds now. */
  public synchronized CacheSnapshot snapshot() {
    List<CacheSnapshot.EntryState> states = new ArrayList<>(entries.size());
    for (CacheEntry e : entries.values()) {
      State state = e.state();
      states.add(
          new CacheSnapshot.EntryState(
              e.broadcastId,
              e.key.decoder,
              state == State.SHARED || state == State.RETAINED,
              state == State.RETAINED,
              e.holders(),
              e.bytes().total()));
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
      // One entry per decoder of the broadcast.
      for (CacheEntry entry : new ArrayList<>(entries.values())) {
        if (entry.broadcastId != broadcastId) {
          continue;
        }
        if (entry.state() == State.RETAINED) {
          evict(entry, Eviction.DROPPED, evicted);
        } else {
          entry.drop();
        }
      }
    }
    freeEvicted(evicted);
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
    freeEvicted(evicted);
  }

  /** The holds readers gave out ({@link BroadcastReader#hold(String)}) still open, unordered. */
  public List<BroadcastHold> outstandingHolds() {
    return new ArrayList<>(outstandingHolds);
  }

  /**
   * Frees every idle entry and retains nothing from now on. Entries that tasks or holds still hold
   * are freed at their last release; the cache still serves opens, without retention. Holds still
   * open are logged as leaks, naming the broadcast, the task and the holder.
   */
  public void close() {
    for (BroadcastHold leaked : outstandingHolds) {
      DecodeLog.leakedHold(leaked);
    }
    List<Evicted> evicted = new ArrayList<>();
    synchronized (this) {
      closed = true;
      while (!retained.isEmpty()) {
        evict(retained.values().iterator().next(), Eviction.CLOSED, evicted);
      }
    }
    freeEvicted(evicted);
  }

  /** Running totals since the cache was made, and gauges. */
  public CacheCounters counters() {
    return counters;
  }

  // ---------------------------------------------------------------------------------------------
  // The entry state machine

  /**
   * The life of an entry. A shared one: DECODING, then SHARED (or FAILED, or PRIVATE when its form
   * cannot be shared). At its last holder a SHARED entry becomes RETAINED (idle, its bytes in the
   * storage memory) or RELEASED. A RETAINED entry becomes SHARED again when a task opens it, or
   * RELEASED when evicted. A private one (sharing off, or after a failed or unshareable shared
   * decode): PRIVATE, then RELEASED.
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
}
