package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
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

  private final TestBroadcast broadcast;
  private final long heapBytes;
  private final CallScript script = new CallScript("build");
  private final AtomicInteger releases = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();

  KeyTableDerivation(TestBroadcast broadcast, long heapBytes) {
    this.broadcast = broadcast;
    this.heapBytes = heapBytes;
  }

  /** Build {@code build} blocks until the returned gate is released. */
  Gate blockBuild(int build) {
    return script.block(build);
  }

  /** Build {@code build} fails with {@link BuildFailure} (after its gate, if any). */
  KeyTableDerivation failBuild(int build) {
    script.fail(build);
    return this;
  }

  /** Lets every blocked build go (for a test's teardown). */
  void releaseAll() {
    script.releaseAll();
  }

  /** Builds started. */
  int builds() {
    return script.calls();
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
    int build = script.start();
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
      script.passGate(build);
      if (script.fails(build)) {
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
