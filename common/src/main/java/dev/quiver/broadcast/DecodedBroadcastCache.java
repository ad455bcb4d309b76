package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
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
 *       when the task completes, and the entry is freed when its last holder completes. A later
 *       task decodes again.
 *   <li>A failed decode is not cached and leaves nothing allocated: its waiters decode for
 *       themselves, and the next task to arrive tries a shared decode again.
 *   <li>A broadcast whose streams carry dictionaries is not shared: the task that decoded it keeps
 *       it as its own, and the others decode for themselves.
 *   <li>With sharing off a task decodes for itself, through the same reader.
 * </ul>
 *
 * <p>State changes happen under one monitor in short critical sections; decoding and waiting happen
 * outside it.
 */
@Public
public final class DecodedBroadcastCache {

  /** How often a task waiting on another task's decode checks whether it was killed. */
  public static final long KILL_CHECK_MILLIS = 100;

  private final BufferAllocator allocator;
  private final BroadcastDecoder decoder;
  private final long maxEntryBytes;
  private final Map<Long, Entry> entries = new HashMap<>();
  private final CacheCounters counters = new CacheCounters();

  /**
   * A cache that decodes broadcasts as Arrow IPC streams (see {@link BroadcastSource}).
   *
   * @param allocator parent of every entry's allocator; the cache never closes it
   * @param maxEntryBytes the most one decoded broadcast may allocate; a stream claiming more is
   *     rejected as corrupt before the memory is taken
   */
  public DecodedBroadcastCache(BufferAllocator allocator, long maxEntryBytes) {
    this(allocator, BroadcastDecoder.ARROW_IPC, maxEntryBytes);
  }

  /** A cache without a bound on one broadcast's decoded bytes (beyond its allocator's). */
  public DecodedBroadcastCache(BufferAllocator allocator) {
    this(allocator, Long.MAX_VALUE);
  }

  /** A cache with another decoder: for tests that script decodes and their failures. */
  DecodedBroadcastCache(BufferAllocator allocator, BroadcastDecoder decoder, long maxEntryBytes) {
    Preconditions.checkArgument(maxEntryBytes > 0, "maxEntryBytes must be positive");
    this.allocator = allocator;
    this.decoder = decoder;
    this.maxEntryBytes = maxEntryBytes;
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
      return decodePrivately(source, task);
    }
    long id = source.broadcastId();
    Entry entry;
    State found;
    synchronized (this) {
      entry = entries.get(id);
      if (entry == null) {
        entry = new Entry(id, newEntryAllocator("broadcast-" + id));
        entries.put(id, entry);
        found = null;
      } else {
        found = entry.state;
      }
      // The decoding task, a task reading a shared entry, and a task waiting for a decode all
      // hold the entry from here: none of them can free it under another.
      entry.hold();
    }
    // Outside the monitor: the task's listener registration is foreign code.
    Hold hold = new Hold(entry);
    task.onCompletion(hold::finish);
    if (found == null) {
      return decodeShared(hold, source);
    }
    if (found == State.SHARED) {
      counters.sharedReads.incrementAndGet();
      return hold.attach();
    }
    counters.waits.incrementAndGet();
    boolean shareable;
    try {
      shareable = awaitShareable(entry.outcome, task, id);
    } catch (IOException | RuntimeException | Error e) {
      hold.finish();
      throw e;
    }
    if (shareable) {
      counters.sharedReads.incrementAndGet();
      return hold.attach();
    }
    // Failed or not shareable: let go of it now, and decode for this task alone.
    hold.finish();
    return decodePrivately(source, task);
  }

  /** What the cache holds now. */
  public synchronized CacheSnapshot snapshot() {
    List<CacheSnapshot.EntryState> states = new ArrayList<>(entries.size());
    for (Entry e : entries.values()) {
      states.add(
          new CacheSnapshot.EntryState(
              e.broadcastId,
              e.state == State.SHARED,
              e.holders(),
              e.allocator.getAllocatedMemory()));
    }
    return new CacheSnapshot(states, allocator.getAllocatedMemory());
  }

  /** Running totals since the cache was made. */
  public CacheCounters counters() {
    return counters;
  }

  private BroadcastReader decodeShared(Hold hold, BroadcastSource source) throws IOException {
    Entry entry = hold.entry;
    DecodedBroadcast decoded;
    try {
      decoded = decoder.decode(source, entry.allocator);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      synchronized (this) {
        entry.moveTo(State.FAILED);
        entries.remove(entry.broadcastId, entry);
      }
      // The waiters' holds end with nothing to free: the allocator goes now.
      closeAllocator(entry, e);
      entry.outcome.complete(false);
      hold.finish();
      throw e;
    }
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
    return hold.attach();
  }

  private BroadcastReader decodePrivately(BroadcastSource source, TaskScope task)
      throws IOException {
    Entry entry =
        new Entry(
            source.broadcastId(),
            newEntryAllocator("broadcast-" + source.broadcastId() + "-task-" + task.attemptId()));
    try {
      entry.decoded = decoder.decode(source, entry.allocator);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      closeAllocator(entry, e);
      throw e;
    }
    counters.privateDecodes.incrementAndGet();
    synchronized (this) {
      entry.moveTo(State.PRIVATE);
      entry.hold();
    }
    Hold hold = new Hold(entry);
    task.onCompletion(hold::finish);
    return hold.attach();
  }

  /** Ends one hold on {@code entry}; the last hold on a decoded entry frees it. */
  private void release(Entry entry) {
    synchronized (this) {
      if (entry.letGo() > 0) {
        return;
      }
      entries.remove(entry.broadcastId, entry);
      if (entry.state == State.FAILED) {
        return;
      }
      entry.moveTo(State.RELEASED);
    }
    entry.decoded.close();
    closeAllocator(entry, null);
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

  private static void closeAllocator(Entry entry, Throwable failure) {
    try {
      entry.allocator.close();
    } catch (RuntimeException e) {
      if (failure == null) {
        throw e;
      }
      failure.addSuppressed(e);
    }
  }

  /**
   * The life of an entry. A shared one: DECODING, then SHARED (or FAILED, or PRIVATE when its
   * streams carry dictionaries), then RELEASED at its last holder. A private one (sharing off, or
   * after a failed or unshareable shared decode): PRIVATE, then RELEASED.
   */
  enum State {
    DECODING,
    SHARED,
    PRIVATE,
    FAILED,
    RELEASED;

    boolean canMoveTo(State next) {
      switch (this) {
        case DECODING:
          return next == SHARED || next == PRIVATE || next == FAILED;
        case SHARED:
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

    void hold() {
      if (state == State.RELEASED || state == State.FAILED) {
        throw new IllegalStateException(
            "broadcast " + broadcastId + ": a hold on a " + state + " entry");
      }
      holders++;
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
  }

  /** Counts of what the cache has done, for tests and metrics. */
  public static final class CacheCounters {
    final AtomicLong decodes = new AtomicLong();
    final AtomicLong privateDecodes = new AtomicLong();
    final AtomicLong sharedReads = new AtomicLong();
    final AtomicLong waits = new AtomicLong();
    final AtomicLong failedDecodes = new AtomicLong();

    /** Successful decodes into a shared entry (including one later found to carry dictionaries). */
    public long decodes() {
      return decodes.get();
    }

    /** Successful decodes for one task alone: sharing off, after a failed or unshareable decode. */
    public long privateDecodes() {
      return privateDecodes.get();
    }

    /** Reads that took a hold on an entry another task decoded. */
    public long sharedReads() {
      return sharedReads.get();
    }

    /** Times a task waited for another task's decode. */
    public long waits() {
      return waits.get();
    }

    public long failedDecodes() {
      return failedDecodes.get();
    }
  }
}
