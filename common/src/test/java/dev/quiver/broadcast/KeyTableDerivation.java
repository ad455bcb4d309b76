package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;

/**
 * The derivation of the derived-value tests: every key of a {@link TestBroadcast} (each batch
 * checked as it is read) copied into an Arrow buffer of the value's allocator, as a join's build
 * table would keep them, plus a stated number of heap bytes. Counts its builds (numbered from 1 in
 * the order they start) and releases; chosen builds block until the test lets them go, or fail
 * after allocating, freeing what they allocated as a derivation must.
 */
final class KeyTableDerivation implements Derivation<KeyTableDerivation.KeyTable> {

  private static final long GATE_TIMEOUT_SECONDS = 60;

  /** The value: the keys in a buffer, and which build made it. */
  static final class KeyTable {
    final int build;
    final long rows;
    final ArrowBuf keys;

    /** What its allocator held once it was built. */
    final long arrowBytes;

    private KeyTable(int build, long rows, ArrowBuf keys, long arrowBytes) {
      this.build = build;
      this.rows = rows;
      this.keys = keys;
      this.arrowBytes = arrowBytes;
    }

    long key(long row) {
      return keys.getLong(row * Long.BYTES);
    }
  }

  /** The failure a scripted build throws. */
  static final class BuildFailure extends IOException {
    private static final long serialVersionUID = 1L;

    BuildFailure(int build) {
      super("injected failure of build " + build);
    }
  }

  /** Holds one build until {@link #release()}. */
  static final class Gate {
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    void awaitEntered() throws InterruptedException {
      if (!entered.await(GATE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new AssertionError("the build never reached its gate");
      }
    }

    void release() {
      released.countDown();
    }

    private void pass() throws InterruptedIOException {
      entered.countDown();
      try {
        if (!released.await(GATE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never released the build");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted at the gate");
      }
    }
  }

  private final TestBroadcast broadcast;
  private final long heapBytes;
  private final AtomicInteger builds = new AtomicInteger();
  private final AtomicInteger releases = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final Map<Integer, Gate> gates = new ConcurrentHashMap<>();
  private final Set<Integer> failing = ConcurrentHashMap.newKeySet();

  KeyTableDerivation(TestBroadcast broadcast, long heapBytes) {
    this.broadcast = broadcast;
    this.heapBytes = heapBytes;
  }

  /** Build {@code build} blocks until the returned gate is released. */
  Gate blockBuild(int build) {
    Gate gate = new Gate();
    gates.put(build, gate);
    return gate;
  }

  /** Build {@code build} fails with {@link BuildFailure} (after its gate, if any). */
  KeyTableDerivation failBuild(int build) {
    failing.add(build);
    return this;
  }

  /** Lets every blocked build go (for a test's teardown). */
  void releaseAll() {
    for (Gate gate : gates.values()) {
      gate.release();
    }
  }

  /** Builds started. */
  int builds() {
    return builds.get();
  }

  /** Builds that threw. */
  int failures() {
    return failures.get();
  }

  /** Values released. */
  int releases() {
    return releases.get();
  }

  @Override
  public DerivedValue<KeyTable> build(BroadcastReader reader, BufferAllocator allocator)
      throws IOException {
    int build = builds.incrementAndGet();
    long rows = broadcast.totalRows();
    ArrowBuf keys = allocator.buffer(Math.max(1, rows) * Long.BYTES);
    try {
      long row = 0;
      int batch = 0;
      while (reader.next()) {
        TestBroadcast.ExpectedBatch expected = broadcast.batches().get(batch++);
        broadcast.check(expected, reader.current(), reader.dictionaries());
        BigIntVector k = (BigIntVector) reader.current().getVector(0);
        for (int r = 0; r < k.getValueCount(); r++) {
          keys.setLong(row++ * Long.BYTES, k.get(r));
        }
      }
      assertEquals(rows, row, "rows the build read");
      assertFalse(reader.next());
      Gate gate = gates.get(build);
      if (gate != null) {
        gate.pass();
      }
      if (failing.contains(build)) {
        throw new BuildFailure(build);
      }
    } catch (IOException | RuntimeException | Error e) {
      keys.close();
      failures.incrementAndGet();
      throw e;
    }
    KeyTable table = new KeyTable(build, rows, keys, allocator.getAllocatedMemory());
    return DerivedValue.of(
        table,
        heapBytes,
        () -> {
          keys.close();
          releases.incrementAndGet();
        });
  }
}
