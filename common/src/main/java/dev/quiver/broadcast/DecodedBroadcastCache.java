package dev.quiver.broadcast;

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
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Decodes each broadcast once per executor while its tasks overlap, and lets those tasks share the
 * decoded buffers.
 *
 * <p>The rules, each of which a test breaks on purpose:
 *
 * <ul>
 *   <li>The first task to read a broadcast decodes it into a child allocator the cache owns; no
 *       lock is held while it decodes.
 *   <li>Tasks that arrive during the decode wait for it, checking every {@link #KILL_CHECK_MILLIS}
 *       ms whether they were killed.
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
public final class DecodedBroadcastCache {

  /** How often a task waiting on another task's decode checks whether it was killed. */
  public static final long KILL_CHECK_MILLIS = 100;

  private final BufferAllocator allocator;
  private final BroadcastDecoder decoder;
  private final long maxEntryBytes;
  private final Map<Long, Entry> entries = new HashMap<>();
  private final CacheCounters counters = new CacheCounters();

  /**
   * @param allocator parent of every entry's allocator; the cache never closes it
   * @param decoder how broadcasts are decoded
   * @param maxEntryBytes the most one decoded broadcast may allocate; a stream claiming more is
   *     rejected as corrupt before the memory is taken
   */
  public DecodedBroadcastCache(
      BufferAllocator allocator, BroadcastDecoder decoder, long maxEntryBytes) {
    this.allocator = allocator;
    this.decoder = decoder;
    this.maxEntryBytes = maxEntryBytes;
  }

  public DecodedBroadcastCache(BufferAllocator allocator) {
    this(allocator, BroadcastDecoder.ARROW_IPC, Long.MAX_VALUE);
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
    while (true) {
      Entry entry;
      CompletableFuture<Boolean> inProgress = null;
      boolean held = false;
      synchronized (this) {
        entry = entries.get(id);
        if (entry == null) {
          entry = new Entry(id, newEntryAllocator("broadcast-" + id));
          entries.put(id, entry);
        } else if (entry.decoded != null) {
          entry.holders++;
          held = true;
        } else {
          inProgress = entry.outcome;
        }
      }
      if (held) {
        // Outside the monitor: the task's listener registration is foreign code.
        counters.sharedReads.incrementAndGet();
        return attach(entry, task);
      }
      if (inProgress == null) {
        return decodeShared(entry, source, task);
      }
      counters.waits.incrementAndGet();
      if (!awaitShareable(inProgress, task, id)) {
        return decodePrivately(source, task);
      }
      // Decoded and shareable: loop to take a hold (or, if it was freed meanwhile, to decode).
    }
  }

  /** What the cache holds now. */
  public synchronized CacheSnapshot snapshot() {
    List<CacheSnapshot.EntryState> states = new ArrayList<>(entries.size());
    for (Entry e : entries.values()) {
      states.add(
          new CacheSnapshot.EntryState(
              e.broadcastId, e.decoded != null, e.holders, e.allocator.getAllocatedMemory()));
    }
    return new CacheSnapshot(states, allocator.getAllocatedMemory());
  }

  /** Running totals since the cache was made. */
  public CacheCounters counters() {
    return counters;
  }

  private BroadcastReader decodeShared(Entry entry, BroadcastSource source, TaskScope task)
      throws IOException {
    DecodedBroadcast decoded;
    try {
      decoded = decoder.decode(source, entry.allocator);
    } catch (IOException | RuntimeException | Error e) {
      counters.failedDecodes.incrementAndGet();
      synchronized (this) {
        entries.remove(entry.broadcastId, entry);
      }
      closeAllocator(entry, e);
      entry.outcome.complete(false);
      throw e;
    }
    counters.decodes.incrementAndGet();
    boolean shareable = !decoded.hasDictionaries();
    synchronized (this) {
      entry.decoded = decoded;
      entry.holders = 1;
      if (!shareable) {
        // Kept by this task alone; others decode for themselves.
        entries.remove(entry.broadcastId, entry);
      }
    }
    entry.outcome.complete(shareable);
    return attach(entry, task);
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
    entry.holders = 1;
    return attach(entry, task);
  }

  /** Gives {@code task} a reader on {@code entry}, which it holds until the task completes. */
  private BroadcastReader attach(Entry entry, TaskScope task) {
    BroadcastReader reader = new BroadcastReader(entry.decoded, entry.allocator);
    task.onCompletion(
        () -> {
          reader.close();
          release(entry);
        });
    return reader;
  }

  private void release(Entry entry) {
    synchronized (this) {
      entry.holders--;
      if (entry.holders > 0) {
        return;
      }
      entries.remove(entry.broadcastId, entry);
    }
    entry.decoded.close();
    closeAllocator(entry, null);
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

  /** One broadcast's decoded value and the tasks holding it. Guarded by the cache's monitor. */
  private static final class Entry {
    final long broadcastId;
    final BufferAllocator allocator;

    /** Completes when the decode ends: true if the entry is now shared, false otherwise. */
    final CompletableFuture<Boolean> outcome = new CompletableFuture<>();

    DecodedBroadcast decoded;
    int holders;

    Entry(long broadcastId, BufferAllocator allocator) {
      this.broadcastId = broadcastId;
      this.allocator = allocator;
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
