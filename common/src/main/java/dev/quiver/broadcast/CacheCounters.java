package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What a {@link DecodedBroadcastCache} has done since it was made (running totals) and holds now
 * (gauges), for tests, metrics and engines' reports. Every figure is read without a lock: figures
 * read one after another may straddle a change.
 */
@Public
public final class CacheCounters {
  // Totals.
  final AtomicLong decodes = new AtomicLong();
  final AtomicLong privateDecodes = new AtomicLong();
  final AtomicLong sharedReads = new AtomicLong();
  final AtomicLong retainedReads = new AtomicLong();
  final AtomicLong waits = new AtomicLong();
  final AtomicLong waitNanos = new AtomicLong();
  final AtomicLong failedDecodes = new AtomicLong();
  final AtomicLong derivedBuilds = new AtomicLong();
  final AtomicLong derivedReuses = new AtomicLong();
  final AtomicLong failedDerivations = new AtomicLong();
  final AtomicLong doubleReleases = new AtomicLong();
  private final Map<Eviction, AtomicLong> evictions = new EnumMap<>(Eviction.class);

  // Gauges, changed under the cache's monitor.
  final AtomicLong entriesHeld = new AtomicLong();
  final AtomicLong entriesRetained = new AtomicLong();
  final AtomicLong bytesRetained = new AtomicLong();

  /**
   * Heap and native bytes of every decoded form and derived value not yet freed, held or retained:
   * a gauge changed right after a form is decoded or a value built, and as they are freed, outside
   * the monitors.
   */
  final AtomicLong bytesOutsideAllocators = new AtomicLong();

  private final BufferAllocator cacheAllocator;

  CacheCounters(BufferAllocator cacheAllocator) {
    this.cacheAllocator = cacheAllocator;
    for (Eviction cause : Eviction.values()) {
      evictions.put(cause, new AtomicLong());
    }
  }

  void countEviction(Eviction cause) {
    evictions.get(cause).incrementAndGet();
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

  /** Decodes that threw (not cached; the waiters and the next task decode again). */
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

  /**
   * Closes of a {@link BroadcastHold} already closed: each one a consumer's bug, reported and
   * otherwise ignored.
   */
  public long doubleReleases() {
    return doubleReleases.get();
  }

  /** Idle entries evicted for {@code cause}. */
  public long evictions(Eviction cause) {
    return evictions.get(cause).get();
  }

  /** {@link #evictions(Eviction)} for {@link Eviction#BUDGET}. */
  public long budgetEvictions() {
    return evictions(Eviction.BUDGET);
  }

  /** {@link #evictions(Eviction)} for {@link Eviction#PRESSURE}. */
  public long pressureEvictions() {
    return evictions(Eviction.PRESSURE);
  }

  /** {@link #evictions(Eviction)} for {@link Eviction#DROPPED}. */
  public long droppedEvictions() {
    return evictions(Eviction.DROPPED);
  }

  /** {@link #evictions(Eviction)} for {@link Eviction#CLOSED}. */
  public long closedEvictions() {
    return evictions(Eviction.CLOSED);
  }

  /** Gauge: entries (shared or private) that running tasks hold now, decoding ones included. */
  public long entriesHeld() {
    return entriesHeld.get();
  }

  /**
   * Gauge: bytes of the entries tasks and holds hold (their views and derived values, heap and
   * native bytes included): all the cache's bytes but the retained ones.
   */
  public long bytesHeld() {
    return Math.max(
        0,
        cacheAllocator.getAllocatedMemory() + bytesOutsideAllocators.get() - bytesRetained.get());
  }

  /** Gauge: idle retained entries now. */
  public long entriesRetained() {
    return entriesRetained.get();
  }

  /**
   * Gauge: bytes of the idle retained entries (heap and native bytes included), as acquired from
   * the storage memory.
   */
  public long bytesRetained() {
    return bytesRetained.get();
  }
}
