package dev.quiver.fuzz;

import dev.quiver.codec.Lz4FramingException;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.shuffle.ShuffleCorruptionException;
import java.io.EOFException;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.AllocationListener;
import org.apache.arrow.memory.AllocationOutcome;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * What every fuzz target asserts about one input, in one place: which exceptions a decoder may
 * throw, how much Arrow memory it may take, that it leaves none behind, and that what it returns is
 * readable to the last value.
 */
final class FuzzChecks {

  private FuzzChecks() {}

  /**
   * The exceptions Quiver documents for bad bytes. Anything else a decoder throws on an input (a
   * {@code RuntimeException}, an {@code Error}, a plain {@code IOException}) is a finding.
   */
  static final List<Class<? extends Throwable>> DOCUMENTED_EXCEPTIONS =
      Collections.unmodifiableList(
          Arrays.asList(
              IpcFormatException.class,
              ShuffleCorruptionException.class,
              Lz4FramingException.class,
              EOFException.class));

  /**
   * The dump tool's own error for a file it cannot read (a bad index, say): exactly {@code
   * IOException}, with a message naming the file. Allowed for the dump's readers only.
   */
  static final Class<IOException> DUMP_OWN_ERROR = IOException.class;

  /** Arrow memory one input may take at its peak: this many times its decompressed length... */
  static final long PEAK_BYTES_PER_INPUT_BYTE = 4;

  /**
   * ...plus this much: a claim the decoder allocates before its bytes arrive ({@code
   * ArrowIpc.UNREAD_CLAIM_BYTES}, 1 MiB) and the piece after it, a few small buffers, rounding to
   * powers of two.
   */
  static final long PEAK_SLACK_BYTES = 4L * 1024 * 1024;

  /**
   * The allocator's hard limit: far above any bound an input of the fuzzer's size can earn, so that
   * an allocation over the bound is measured rather than refused (a refused one fails too).
   */
  static final long ALLOCATOR_LIMIT_BYTES = 512L * 1024 * 1024;

  /** The peak Arrow memory allowed for an input that decompresses to {@code bytes} bytes. */
  static long peakBound(long bytes) {
    return PEAK_BYTES_PER_INPUT_BYTE * bytes + PEAK_SLACK_BYTES;
  }

  /**
   * Checks that {@code thrown} (may be null) is one of the documented exceptions.
   *
   * @throws Throwable {@code thrown} itself when it is not, so the finding keeps its stack
   */
  static void allowOnlyDocumented(Throwable thrown) throws Throwable {
    if (thrown == null) {
      return;
    }
    for (Class<? extends Throwable> allowed : DOCUMENTED_EXCEPTIONS) {
      if (allowed.isInstance(thrown)) {
        return;
      }
    }
    throw thrown;
  }

  /** {@link #allowOnlyDocumented}, with the dump tool's own error allowed too. */
  static void allowOnlyDocumentedForDump(Throwable thrown) throws Throwable {
    if (thrown == null || thrown.getClass() == DUMP_OWN_ERROR) {
      return;
    }
    allowOnlyDocumented(thrown);
  }

  /** A fresh root allocator for one input, which records allocations the limit refused. */
  static Memory memory() {
    return new Memory();
  }

  /** One input's allocator and what was asked of it. */
  static final class Memory implements AutoCloseable {
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong largestRequest = new AtomicLong();
    final BufferAllocator allocator;

    private Memory() {
      AllocationListener listener =
          new AllocationListener() {
            @Override
            public void onPreAllocation(long size) {
              largestRequest.accumulateAndGet(size, Math::max);
            }

            @Override
            public boolean onFailedAllocation(long size, AllocationOutcome outcome) {
              refused.accumulateAndGet(size, Math::max);
              return false;
            }
          };
      allocator = new RootAllocator(listener, ALLOCATOR_LIMIT_BYTES);
    }

    /**
     * The end of every input: nothing left allocated, no refused allocation, and a peak within the
     * bound for {@code decompressedBytes}. Closes the allocator.
     */
    void checkAndClose(long decompressedBytes, String what) {
      AssertionError finding = null;
      long bound = peakBound(decompressedBytes);
      long peak = allocator.getPeakMemoryAllocation();
      if (allocator.getAllocatedMemory() != 0) {
        finding =
            new AssertionError(
                what
                    + ": leaked "
                    + allocator.getAllocatedMemory()
                    + " bytes\n"
                    + allocator.toVerboseString());
      } else if (refused.get() > 0) {
        finding =
            new AssertionError(
                what
                    + ": asked for "
                    + refused.get()
                    + " bytes at once (the limit refused it)"
                    + " for "
                    + decompressedBytes
                    + " decompressed bytes; bound "
                    + bound);
      } else if (peak > bound) {
        finding =
            new AssertionError(
                what
                    + ": peak "
                    + peak
                    + " bytes (largest single request "
                    + largestRequest.get()
                    + ") for "
                    + decompressedBytes
                    + " decompressed bytes; bound "
                    + bound);
      }
      if (finding == null) {
        allocator.close();
        return;
      }
      try {
        allocator.close();
      } catch (RuntimeException e) {
        // The leak again, as Arrow reports it; the finding above says it first.
        finding.addSuppressed(e);
      }
      throw finding;
    }

    /**
     * The end of every input: {@code thrown} (null if the decode succeeded) must be documented,
     * then {@link #checkAndClose}. An undocumented exception is rethrown as it is, with any failure
     * to close the allocator added to it.
     */
    void finish(Throwable thrown, long decompressedBytes, String what) throws Throwable {
      finish(thrown, false, decompressedBytes, what);
    }

    /** {@link #finish}, for the dump tool's readers when {@code dump}. */
    void finish(Throwable thrown, boolean dump, long decompressedBytes, String what)
        throws Throwable {
      try {
        if (dump) {
          allowOnlyDocumentedForDump(thrown);
        } else {
          allowOnlyDocumented(thrown);
        }
      } catch (Throwable finding) {
        try {
          allocator.close();
        } catch (RuntimeException e) {
          finding.addSuppressed(e);
        }
        throw finding;
      }
      checkAndClose(decompressedBytes, what);
    }

    /** Closes the allocator without checks (the input already failed otherwise). */
    @Override
    public void close() {
      allocator.close();
    }
  }

  /** Loads every batch of {@code stream} and reads every value of it and of its dictionaries. */
  static void readAll(DecodedStream stream, BufferAllocator allocator) {
    for (ArrowRecordBatch batch : stream.batches()) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(stream.schema(), allocator)) {
        new VectorLoader(root).load(batch);
        readAll(root);
      }
    }
    for (long id : stream.getDictionaryIds()) {
      Dictionary dictionary = stream.lookup(id);
      readAll(dictionary.getVector());
    }
  }

  /** Reads every value of every vector of {@code root}, nested children included. */
  static void readAll(VectorSchemaRoot root) {
    for (FieldVector vector : root.getFieldVectors()) {
      readAll(vector);
    }
  }

  /** Reads every value of {@code vector} and of its children. */
  static void readAll(ValueVector vector) {
    int count = vector.getValueCount();
    for (int i = 0; i < count; i++) {
      vector.isNull(i);
      vector.getObject(i);
    }
    if (vector instanceof FieldVector) {
      for (FieldVector child : ((FieldVector) vector).getChildrenFromFields()) {
        readAll(child);
      }
    }
  }
}
