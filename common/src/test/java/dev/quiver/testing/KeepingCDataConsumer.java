package dev.quiver.testing;

import dev.quiver.broadcast.BroadcastReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A native-style consumer that keeps what tasks export to it: it imports each task's batches on a
 * thread of its own and releases them only when told, on that thread, whenever that is (after the
 * task ended, or never, if its JVM dies first). For the cluster fault suite, which kills an
 * executor while such exports are out. Java, in common, for the reason {@link CDataConsumer} is.
 */
public final class KeepingCDataConsumer {

  private static final long CHECK_MILLIS = 50;

  private final BufferAllocator allocator = new RootAllocator();
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          work -> {
            Thread t = new Thread(work, "quiver-test-cdata-consumer");
            t.setDaemon(true);
            return t;
          });

  /** What each holder imported and has not released: roots, their dictionaries, the C structs. */
  private final Map<String, List<AutoCloseable>> kept = new ConcurrentHashMap<>();

  /**
   * Exports every batch {@code reader} has left (on the calling thread, the task's), then imports
   * them on the consumer's thread and keeps them under {@code holder}: the rows imported and the
   * sum of the 64-bit integer column {@code longColumn}, as the consumer read them.
   */
  public long[] exportAndKeep(BroadcastReader reader, String holder, int longColumn)
      throws Exception {
    List<ArrowArray> arrays = new ArrayList<>();
    List<ArrowSchema> schemas = new ArrayList<>();
    CDataConsumer.exportEach(reader, holder, allocator, arrays, schemas);
    return thread.submit(() -> importAndKeep(holder, arrays, schemas, longColumn)).get();
  }

  private long[] importAndKeep(
      String holder, List<ArrowArray> arrays, List<ArrowSchema> schemas, int longColumn) {
    List<AutoCloseable> imported = new ArrayList<>();
    long rows = 0;
    long sum = 0;
    for (int i = 0; i < arrays.size(); i++) {
      CDataDictionaryProvider dictionaries = new CDataDictionaryProvider();
      VectorSchemaRoot root =
          Data.importVectorSchemaRoot(allocator, arrays.get(i), schemas.get(i), dictionaries);
      // Closed in this order on release: the root gives the buffers back to the exporter.
      imported.add(root);
      imported.add(dictionaries);
      imported.add(arrays.get(i));
      imported.add(schemas.get(i));
      BigIntVector column = (BigIntVector) root.getVector(longColumn);
      for (int row = 0; row < root.getRowCount(); row++) {
        sum += column.get(row);
      }
      rows += root.getRowCount();
    }
    kept.merge(
        holder,
        imported,
        (before, more) -> {
          List<AutoCloseable> all = new ArrayList<>(before);
          all.addAll(more);
          return all;
        });
    return new long[] {rows, sum};
  }

  /**
   * Releases what {@code holder} keeps, on the consumer's thread, once {@code when} holds (checked
   * there every 50 ms): does not wait.
   */
  @SuppressWarnings("FutureReturnValueIgnored") // the check reschedules itself until it releases
  public void releaseWhen(String holder, BooleanSupplier when) {
    thread.schedule(
        () -> {
          if (when.getAsBoolean()) {
            release(holder);
          } else {
            releaseWhen(holder, when);
          }
        },
        CHECK_MILLIS,
        TimeUnit.MILLISECONDS);
  }

  private void release(String holder) {
    List<AutoCloseable> imported = kept.remove(holder);
    if (imported == null) {
      return;
    }
    for (AutoCloseable closeable : imported) {
      try {
        closeable.close();
      } catch (Exception e) {
        throw new IllegalStateException("releasing what " + holder + " kept failed", e);
      }
    }
  }

  /** Holders whose imports are not released yet. */
  public int unreleased() {
    return kept.size();
  }

  /** The consumer's own memory still allocated: zero once everything is released. */
  public long allocatedBytes() {
    return allocator.getAllocatedMemory();
  }
}
