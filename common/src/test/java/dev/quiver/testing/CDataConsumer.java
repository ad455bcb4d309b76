package dev.quiver.testing;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.CDataExport;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A native-style consumer of a task's broadcast batches for the Spark-side tests: tasks export
 * batches to it through the Arrow C Data Interface, and it imports and releases them later, on a
 * thread of its own, with memory of its own. In Java, in common, so that the Scala suites that use
 * it never name {@code org.apache.arrow.c}: the tests module's class path also holds Comet's copy
 * of those classes, built on Comet's shaded Arrow.
 */
public final class CDataConsumer implements AutoCloseable {

  private final BufferAllocator allocator = new RootAllocator();
  private final Queue<ArrowArray> arrays = new ConcurrentLinkedQueue<>();
  private final Queue<ArrowSchema> schemas = new ConcurrentLinkedQueue<>();

  /** Exports every batch {@code reader} has left, one array each: the rows exported. */
  public long exportEachBatch(BroadcastReader reader, String holder) {
    return exportEach(reader, holder, allocator, arrays, schemas);
  }

  /**
   * Exports every batch {@code reader} has left into C structs allocated from {@code allocator},
   * one array and schema each, added to {@code arrays} and {@code schemas}: the rows exported.
   */
  static long exportEach(
      BroadcastReader reader,
      String holder,
      BufferAllocator allocator,
      Collection<ArrowArray> arrays,
      Collection<ArrowSchema> schemas) {
    long rows = 0;
    while (reader.next()) {
      ArrowArray array = ArrowArray.allocateNew(allocator);
      ArrowSchema schema = ArrowSchema.allocateNew(allocator);
      CDataExport.exportBatch(reader, holder, array, schema);
      arrays.add(array);
      schemas.add(schema);
      rows += reader.currentBatch().getLength();
    }
    return rows;
  }

  /** Exports not yet imported. */
  public int pending() {
    return arrays.size();
  }

  /**
   * Imports every pending export on a thread of its own, counts its rows and releases it: the rows
   * imported.
   */
  public long importAndReleaseOnAnotherThread() throws Exception {
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try {
      return thread.submit(this::importAndRelease).get();
    } finally {
      thread.shutdown();
    }
  }

  private long importAndRelease() {
    long rows = 0;
    List<AutoCloseable> structs = new ArrayList<>();
    ArrowArray array;
    while ((array = arrays.poll()) != null) {
      ArrowSchema schema = schemas.poll();
      structs.add(array);
      structs.add(schema);
      try (CDataDictionaryProvider dictionaries = new CDataDictionaryProvider();
          VectorSchemaRoot root =
              Data.importVectorSchemaRoot(allocator, array, schema, dictionaries)) {
        rows += root.getRowCount();
      }
    }
    for (AutoCloseable struct : structs) {
      try {
        struct.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing a C struct failed", e);
      }
    }
    return rows;
  }

  /** The consumer's own memory still allocated: zero once everything is released. */
  public long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }

  @Override
  public void close() {
    allocator.close();
  }
}
