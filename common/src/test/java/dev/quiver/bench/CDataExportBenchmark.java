package dev.quiver.bench;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.CDataExport;
import dev.quiver.broadcast.DecodedBroadcastCache;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One task's whole view of a 1M-row broadcast handed to a consumer through the C Data Interface
 * ({@code exportAndImport}: the task opens the cached entry, exports its batches as one stream, the
 * consumer imports every batch through Arrow's JNI and releases them), against decoding the same
 * broadcast ({@code decode}: a task opens it on a cache that does not have it, walks its batches,
 * ends). The export should cost metadata only. {@code exportAndRelease} is Quiver's side alone, and
 * {@code arrowExportFloor} what Arrow's exporter and the C release cost on their own for the same
 * batches, loaded once as structs before the run: the part of an export Quiver cannot save.
 */
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class CDataExportBenchmark extends BroadcastBenchmarkBase {

  private BenchBroadcast source;
  private BufferAllocator root;
  private BufferAllocator consumer;
  private DecodedBroadcastCache warm;
  private DecodedBroadcastCache cold;
  private FakeTask holder;

  /** Arrow's floor: the same batches as structs of their columns, loaded once, outside Quiver. */
  private final List<StructVector> structs = new ArrayList<>();

  private DecodedStream plain;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    root = new RootAllocator();
    byte[] stream = encode(BenchBroadcast.Shape.MIXED, SparkStreamCodec.LZ4, root);
    source = new BenchBroadcast(1, stream, SparkStreamCodec.LZ4);
    consumer = new RootAllocator();
    warm = new DecodedBroadcastCache(root.newChildAllocator("warm", 0, Long.MAX_VALUE));
    cold = new DecodedBroadcastCache(root.newChildAllocator("cold", 0, Long.MAX_VALUE));
    // Keeps the warm cache's entry decoded, as the other tasks of a stage would.
    holder = new FakeTask();
    BroadcastReader held = warm.open(source, holder, true);
    plain = ArrowIpc.decode(stream, SparkStreamCodec.LZ4, root, "floor");
    for (ArrowRecordBatch batch : plain.batches()) {
      StructVector struct = StructVector.emptyWithDuplicates("", root);
      struct.initializeChildrenFromFields(plain.schema().getFields());
      new VectorLoader(new VectorSchemaRoot(plain.schema(), struct.getChildrenFromFields(), 0))
          .load(batch);
      struct.loadFieldBuffers(
          new ArrowFieldNode(batch.getLength(), 0), Collections.singletonList(root.getEmpty()));
      structs.add(struct);
    }
    if (held.rowCount() != rows || exportAndImportRows() != rows) {
      throw new IllegalStateException("the export did not read " + rows + " rows");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    holder.complete();
    structs.forEach(StructVector::close);
    plain.close();
    warm.close();
    cold.close();
    if (root.getAllocatedMemory() != 0 || consumer.getAllocatedMemory() != 0) {
      throw new IllegalStateException(
          "leaked " + root.getAllocatedMemory() + " + " + consumer.getAllocatedMemory() + " bytes");
    }
    for (BufferAllocator child : new ArrayList<>(root.getChildAllocators())) {
      child.close();
    }
    root.close();
    consumer.close();
  }

  private long exportAndImportRows() throws IOException {
    FakeTask task = new FakeTask();
    long read = 0;
    try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumer)) {
      CDataExport.exportStream(warm.open(source, task, true), "bench consumer", stream);
      task.complete();
      try (ArrowReader imported = Data.importArrayStream(consumer, stream)) {
        while (imported.loadNextBatch()) {
          read += imported.getVectorSchemaRoot().getRowCount();
        }
      }
    } finally {
      task.complete();
    }
    return read;
  }

  /** Open the cached entry, export every batch as a stream, import and release them all. */
  @Benchmark
  public long exportAndImport(InvocationCpu cpu) throws IOException {
    return cpu.count(this::exportAndImportRows);
  }

  /**
   * Quiver's side alone: open the cached entry, export each batch (no schema) and release it at
   * once through its C release callback, as a native consumer would, with no Java import.
   */
  @Benchmark
  public long exportAndRelease(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> {
          FakeTask task = new FakeTask();
          long exported = 0;
          try (ArrowArray array = ArrowArray.allocateNew(consumer)) {
            BroadcastReader reader = warm.open(source, task, true);
            while (reader.next()) {
              CDataExport.exportBatch(reader, "bench consumer", array, null);
              exported += reader.currentBatch().getLength();
              array.release();
            }
          } finally {
            task.complete();
          }
          return exported;
        });
  }

  /** Arrow alone: export each batch's struct and release it through its C release callback. */
  @Benchmark
  public long arrowExportFloor(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> {
          long exported = 0;
          try (ArrowArray array = ArrowArray.allocateNew(consumer)) {
            for (StructVector struct : structs) {
              Data.exportVector(root, struct, null, array);
              exported += struct.getValueCount();
              array.release();
            }
          }
          return exported;
        });
  }

  /** Open the broadcast on a cache without it (a decode), walk its batches, end the task. */
  @Benchmark
  public long decode(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> {
          FakeTask task = new FakeTask();
          try {
            BroadcastReader reader = cold.open(source, task, true);
            long read = 0;
            while (reader.next()) {
              read += reader.currentBatch().getLength();
            }
            return read;
          } finally {
            task.complete();
          }
        });
  }
}
