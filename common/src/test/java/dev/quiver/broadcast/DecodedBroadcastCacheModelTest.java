package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cache against a sequential model of its rules, driven from one thread by a seeded random
 * walk: tasks open broadcasts (shared or not, some decodes failing), ask for derived values (some
 * builds failing) and complete, broadcasts stop and start being live or are dropped, Spark's own
 * blocks fill and empty the storage memory. After every step the decode and build counts, each
 * entry's state, holders and bytes, the storage memory, the values released and the counters must
 * be the model's.
 */
class DecodedBroadcastCacheModelTest extends CacheTestBase {

  private static final int BROADCASTS = 5;
  private static final int STEPS = 3000;
  private static final long SPARK_BLOCKS = -1;

  /** The Arrow bytes each derived value keeps (a power of two: allocated exactly). */
  private static final long VALUE_ARROW_BYTES = 4096;

  /** The derivation keys, and the heap bytes of each one's value (set from the entry sizes). */
  private static final String[] KEYS = {"small", "large"};

  /**
   * The derivation of the walk: reads the whole broadcast, keeps {@link #VALUE_ARROW_BYTES} of
   * Arrow memory and {@code heapBytes} of heap, and fails (freeing its buffer) when told to.
   */
  private static final class WalkDerivation implements Derivation<Long> {
    final long heapBytes;
    boolean failNext;
    long releases;

    WalkDerivation(long heapBytes) {
      this.heapBytes = heapBytes;
    }

    @Override
    public DerivedValue<Long> build(BroadcastReader reader, BufferAllocator allocator)
        throws IOException {
      ArrowBuf kept = allocator.buffer(VALUE_ARROW_BYTES);
      long rows = 0;
      while (reader.next()) {
        rows += reader.current().getRowCount();
      }
      if (failNext) {
        failNext = false;
        kept.close();
        throw new IOException("injected build failure");
      }
      return DerivedValue.of(
          rows,
          heapBytes,
          () -> {
            kept.close();
            releases++;
          });
    }
  }

  /** The model's view of one shared entry. */
  private static final class ModelEntry {
    int holders;
    boolean retained;
    boolean dropped;
    long retainedBytes;

    /** Its derived values: the keys built, with each value's bytes (Arrow and heap). */
    final Map<String, Long> derived = new HashMap<>();
  }

  /** One hold a task took: on the shared entry of {@code id}, or on a private decode. */
  private static final class ModelHold {
    final long id;
    final boolean shared;

    /** The values built on the private decode this hold is (empty for a shared hold). */
    final Map<String, Long> privateDerived = new HashMap<>();

    /** The task's reader of this hold. */
    BroadcastReader reader;

    ModelHold(long id, boolean shared) {
      this.id = id;
      this.shared = shared;
    }
  }

  /** The cache's rules, sequentially, over the same liveness set and pool rule. */
  private static final class Model {
    final long[] sizes;
    final long budget;
    final long capacity;
    final Set<Long> live;
    final Map<Long, ModelEntry> entries = new HashMap<>();
    final LinkedHashMap<Long, ModelEntry> lru = new LinkedHashMap<>();
    final Map<FakeTask, List<ModelHold>> holds = new LinkedHashMap<>();
    long sparkBlocks;
    long retainedBytes;
    long decodes;
    long privateDecodes;
    long failedDecodes;
    long sharedReads;
    long retainedReads;
    long budgetEvictions;
    long pressureEvictions;
    long droppedEvictions;
    long closedEvictions;
    long derivedBuilds;
    long derivedReuses;
    long failedDerivations;
    long valuesReleased;
    long privateHeld;
    boolean closed;

    /** How the last successful open was served. */
    BroadcastReader.Served served;

    Model(long[] sizes, long budget, long capacity, Set<Long> live) {
      this.sizes = sizes;
      this.budget = budget;
      this.capacity = capacity;
      this.live = live;
    }

    long size(long id) {
      return sizes[(int) id - 1];
    }

    /** An entry's bytes: its decode and its derived values. */
    long bytes(long id, ModelEntry e) {
      long bytes = size(id);
      for (long value : e.derived.values()) {
        bytes += value;
      }
      return bytes;
    }

    /** An entry's (or a private decode's) values go with it. */
    void free(Map<String, Long> derived) {
      valuesReleased += derived.size();
      derived.clear();
    }

    /**
     * A derive; {@code fails} is asked only if it builds, and says whether that build fails.
     *
     * @return whether it gets a value
     */
    boolean derive(ModelHold hold, String key, long valueBytes, BooleanSupplier fails) {
      Map<String, Long> values = hold.shared ? entries.get(hold.id).derived : hold.privateDerived;
      boolean got;
      if (values.containsKey(key)) {
        derivedReuses++;
        got = true;
      } else if (fails.getAsBoolean()) {
        failedDerivations++;
        got = false;
      } else {
        derivedBuilds++;
        values.put(key, valueBytes);
        got = true;
      }
      // A derive holds the entry once more while it runs: the end of that hold checks too.
      sweep();
      return got;
    }

    long used() {
      return sparkBlocks + retainedBytes;
    }

    boolean underPressure() {
      return capacity - used() < capacity / 10;
    }

    boolean sparkAcquire(long bytes) {
      if (bytes > capacity - used()) {
        return false;
      }
      sparkBlocks += bytes;
      return true;
    }

    void evict(long id) {
      ModelEntry e = lru.remove(id);
      entries.remove(id);
      retainedBytes -= e.retainedBytes;
      assertTrue(e.retained && e.holders == 0);
      free(e.derived);
    }

    void evictFirst() {
      evict(lru.keySet().iterator().next());
    }

    void sweep() {
      for (Long id : new ArrayList<>(lru.keySet())) {
        if (!live.contains(id)) {
          evict(id);
          droppedEvictions++;
        }
      }
      while (!lru.isEmpty() && underPressure()) {
        evictFirst();
        pressureEvictions++;
      }
    }

    /**
     * An open; {@code fails} is asked only if it decodes, and says whether that decode fails.
     *
     * @return whether the open succeeds
     */
    boolean open(FakeTask task, long id, boolean share, BooleanSupplier fails) {
      sweep();
      List<ModelHold> taskHolds = holds.computeIfAbsent(task, t -> new ArrayList<>());
      if (!share) {
        if (fails.getAsBoolean()) {
          failedDecodes++;
          return false;
        }
        privateDecodes++;
        privateHeld++;
        taskHolds.add(new ModelHold(id, false));
        served = BroadcastReader.Served.PRIVATE;
        return true;
      }
      ModelEntry e = entries.get(id);
      if (e == null) {
        if (fails.getAsBoolean()) {
          failedDecodes++;
          return false;
        }
        e = new ModelEntry();
        entries.put(id, e);
        decodes++;
        served = BroadcastReader.Served.DECODED;
      } else if (e.retained) {
        lru.remove(id);
        retainedBytes -= e.retainedBytes;
        e.retained = false;
        retainedReads++;
        served = BroadcastReader.Served.RETAINED;
      } else {
        sharedReads++;
        served = BroadcastReader.Served.SHARED;
      }
      e.holders++;
      taskHolds.add(new ModelHold(id, true));
      return true;
    }

    void complete(FakeTask task) {
      List<ModelHold> taskHolds = holds.remove(task);
      if (taskHolds == null) {
        return;
      }
      for (ModelHold hold : taskHolds) {
        if (!hold.shared) {
          privateHeld--;
          free(hold.privateDerived);
        } else {
          ModelEntry e = entries.get(hold.id);
          if (--e.holders == 0 && !retain(hold.id, e)) {
            entries.remove(hold.id);
            free(e.derived);
          }
        }
        sweep();
      }
    }

    boolean retain(long id, ModelEntry e) {
      long bytes = bytes(id, e);
      if (closed || e.dropped || !live.contains(id) || bytes > budget) {
        return false;
      }
      while (retainedBytes + bytes > budget) {
        evictFirst();
        budgetEvictions++;
      }
      if (bytes > capacity - used()) {
        return false;
      }
      e.retained = true;
      e.retainedBytes = bytes;
      lru.put(id, e);
      retainedBytes += bytes;
      return true;
    }

    void drop(long id) {
      ModelEntry e = entries.get(id);
      if (e == null) {
        return;
      }
      if (e.retained) {
        evict(id);
        droppedEvictions++;
      } else {
        e.dropped = true;
      }
    }

    void close() {
      closed = true;
      while (!lru.isEmpty()) {
        evictFirst();
        closedEvictions++;
      }
    }

    long heldEntries() {
      long held = privateHeld;
      for (ModelEntry e : entries.values()) {
        if (e.holders > 0) {
          held++;
        }
      }
      return held;
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void theCacheFollowsItsModel(long seed) throws Exception {
    SplittableRandom random = new SplittableRandom(seed);
    Set<Long> live = ConcurrentHashMap.newKeySet();
    TestBroadcast[] broadcasts = new TestBroadcast[BROADCASTS];
    long[] sizes = new long[BROADCASTS];
    for (int i = 0; i < BROADCASTS; i++) {
      long id = i + 1L;
      broadcasts[i] =
          encode(
              id,
              Shape.BUILD_SIDE,
              SparkStreamCodec.LZ4,
              new int[] {50 * (i + 1), 20},
              new int[] {30});
      sizes[i] = bytesOfOneDecode(broadcasts[i], allocator);
      live.add(id);
    }
    // About two or three entries fit the budget; the pool holds about twice the budget. A small
    // value changes little; a large one takes about as much as a middling entry.
    long budget = sizes[2] + sizes[3] + 2 * VALUE_ARROW_BYTES;
    WalkDerivation[] derivations = {new WalkDerivation(1000), new WalkDerivation(sizes[1])};
    long capacity = 2 * budget;
    BoundedStorageMemory memory = new BoundedStorageMemory(capacity);
    cache = caches.with(Retention.of(budget, memory, live::contains));
    Model model = new Model(sizes, budget, capacity, live);
    List<FakeTask> running = new ArrayList<>();
    Consumer[] consumers = {
      Consumer.CLOSES_EACH_VIEW, Consumer.KEEPS_VIEWS_OPEN, Consumer.STOPS_AFTER_FIRST_BATCH
    };

    for (int step = 0; step < STEPS; step++) {
      String what;
      int choice = random.nextInt(100);
      if (choice < 45) {
        FakeTask task =
            running.isEmpty() || random.nextInt(3) == 0
                ? new FakeTask()
                : running.get(random.nextInt(running.size()));
        if (!running.contains(task)) {
          running.add(task);
        }
        long id = 1L + random.nextInt(BROADCASTS);
        boolean share = random.nextInt(10) != 0;
        boolean failDecode = random.nextInt(15) == 0;
        what = "task " + task.attemptId() + " opens " + id + (share ? "" : " privately");
        boolean expectOpened =
            model.open(
                task,
                id,
                share,
                () -> {
                  if (failDecode) {
                    decoder.failCall(decoder.calls() + 1);
                  }
                  return failDecode;
                });
        TestBroadcast broadcast = broadcasts[(int) id - 1];
        boolean opened;
        try {
          BroadcastReader reader = cache.open(broadcast, task, share);
          assertEquals(model.served, reader.served(), what + ": served");
          // One thread: no task ever waits; only a task that decoded has a decode time.
          assertEquals(0, reader.waitNanos(), what + ": waited");
          boolean decoded =
              model.served == BroadcastReader.Served.DECODED
                  || model.served == BroadcastReader.Served.PRIVATE;
          assertEquals(decoded, reader.decodeNanos() > 0, what + ": decode time");
          if (expectOpened) {
            List<ModelHold> taskHolds = model.holds.get(task);
            taskHolds.get(taskHolds.size() - 1).reader = reader;
          }
          consumers[random.nextInt(consumers.length)].consume(reader, broadcast, null);
          opened = true;
        } catch (ScriptedDecoder.InjectedFailure e) {
          opened = false;
        }
        assertEquals(expectOpened, opened, what + ": opened");
      } else if (choice < 55) {
        List<ModelHold> openHolds = new ArrayList<>();
        for (List<ModelHold> taskHolds : model.holds.values()) {
          openHolds.addAll(taskHolds);
        }
        if (openHolds.isEmpty()) {
          continue;
        }
        ModelHold hold = openHolds.get(random.nextInt(openHolds.size()));
        int k = random.nextInt(KEYS.length);
        WalkDerivation derivation = derivations[k];
        boolean failBuild = random.nextInt(8) == 0;
        what = "derive " + KEYS[k] + " of " + hold.id + (hold.shared ? "" : " (private)");
        boolean expectBuilt =
            model.derive(
                hold,
                KEYS[k],
                VALUE_ARROW_BYTES + derivation.heapBytes,
                () -> {
                  derivation.failNext = failBuild;
                  return failBuild;
                });
        long rows;
        try {
          rows = hold.reader.derived(KEYS[k], derivation);
        } catch (IOException e) {
          assertEquals("injected build failure", e.getMessage(), what);
          rows = -1;
        }
        derivation.failNext = false;
        assertEquals(expectBuilt ? broadcasts[(int) hold.id - 1].totalRows() : -1, rows, what);
      } else if (choice < 80) {
        if (running.isEmpty()) {
          continue;
        }
        FakeTask task = running.remove(random.nextInt(running.size()));
        what = "task " + task.attemptId() + " completes";
        model.complete(task);
        task.complete();
      } else if (choice < 87) {
        long id = 1L + random.nextInt(BROADCASTS);
        boolean nowLive = !live.contains(id);
        what = "broadcast " + id + (nowLive ? " lives again" : " is no longer live");
        if (nowLive) {
          live.add(id);
        } else {
          live.remove(id);
        }
      } else if (choice < 90) {
        long id = 1L + random.nextInt(BROADCASTS);
        what = "drop " + id;
        model.drop(id);
        cache.drop(id);
      } else if (choice < 97) {
        long bytes = random.nextLong(capacity / 2);
        if (random.nextBoolean()) {
          what = "Spark's blocks take " + bytes;
          assertEquals(model.sparkAcquire(bytes), memory.tryAcquire(SPARK_BLOCKS, bytes), what);
        } else {
          bytes = Math.min(bytes, model.sparkBlocks);
          what = "Spark's blocks give back " + bytes;
          model.sparkBlocks -= bytes;
          memory.release(SPARK_BLOCKS, bytes);
        }
      } else {
        what = "check retained";
        model.sweep();
        cache.checkRetained();
      }
      assertSame(model, cache, memory, decoder, derivations, "step " + step + " (" + what + ")");
    }

    // Close with some tasks still running: their entries go with them.
    model.close();
    cache.close();
    assertSame(model, cache, memory, decoder, derivations, "after close");
    for (FakeTask task : running) {
      model.complete(task);
      task.complete();
      assertSame(
          model, cache, memory, decoder, derivations, "after close, task " + task.attemptId());
    }
    memory.release(SPARK_BLOCKS, model.sparkBlocks);
    assertEquals(0, memory.used());
    assertTrue(model.budgetEvictions > 0 && model.pressureEvictions > 0, "the walk evicts");
    assertTrue(model.droppedEvictions > 0 && model.retainedReads > 0, "the walk retains");
    assertTrue(
        model.derivedBuilds > 0 && model.derivedReuses > 0 && model.failedDerivations > 0,
        "the walk derives");
    assertTrue(model.valuesReleased > 0, "the walk frees values");
  }

  private static void assertSame(
      Model model,
      DecodedBroadcastCache cache,
      BoundedStorageMemory memory,
      ScriptedDecoder decoder,
      WalkDerivation[] derivations,
      String when) {
    CacheCounters c = cache.counters();
    CacheSnapshot snapshot = cache.snapshot();
    String where = when + ": " + snapshot;
    assertEquals(
        model.decodes + model.privateDecodes + model.failedDecodes, decoder.calls(), where);
    assertEquals(model.decodes, c.decodes(), where);
    assertEquals(model.privateDecodes, c.privateDecodes(), where);
    assertEquals(model.failedDecodes, c.failedDecodes(), where);
    assertEquals(model.sharedReads, c.sharedReads(), where);
    assertEquals(model.retainedReads, c.retainedReads(), where);
    assertEquals(model.budgetEvictions, c.budgetEvictions(), where);
    assertEquals(model.pressureEvictions, c.pressureEvictions(), where);
    assertEquals(model.droppedEvictions, c.droppedEvictions(), where);
    assertEquals(model.closedEvictions, c.closedEvictions(), where);
    assertEquals(model.lru.size(), c.entriesRetained(), where);
    assertEquals(model.retainedBytes, c.bytesRetained(), where);
    assertEquals(model.heldEntries(), c.entriesHeld(), where);
    assertEquals(model.used(), memory.used(), where);

    assertEquals(model.entries.size(), snapshot.entries().size(), where);
    long idleArrowBytes = 0;
    long released = 0;
    for (WalkDerivation d : derivations) {
      released += d.releases;
    }
    for (CacheSnapshot.EntryState real : snapshot.entries()) {
      ModelEntry expected = model.entries.get(real.broadcastId());
      assertNotNull(expected, where);
      assertEquals(expected.retained, real.retained(), where);
      assertEquals(expected.holders, real.holders(), where);
      assertTrue(real.decoded(), where);
      if (real.retained()) {
        assertEquals(model.bytes(real.broadcastId(), expected), real.bytes(), where);
        assertEquals(expected.retainedBytes, real.bytes(), where);
        idleArrowBytes +=
            model.size(real.broadcastId()) + expected.derived.size() * VALUE_ARROW_BYTES;
      }
    }
    assertEquals(model.derivedBuilds, c.derivedBuilds(), where);
    assertEquals(model.derivedReuses, c.derivedReuses(), where);
    assertEquals(model.failedDerivations, c.failedDerivations(), where);
    assertEquals(model.valuesReleased, released, where);
    if (model.holds.isEmpty()) {
      // The snapshot's allocated bytes are Arrow's: the retained entries' bytes but heap bytes.
      assertEquals(idleArrowBytes, snapshot.allocatedBytes(), where);
      assertEquals(0, c.bytesHeld(), where);
    }
  }
}
