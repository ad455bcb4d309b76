package dev.quiver.examples;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.CDataExport;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;

/**
 * The native-consumer example of docs/engines.md, compiled by javac against Quiver's API and
 * Arrow's C Data Interface alone (in common, whose class path holds the one {@code arrow-c-data} of
 * its Arrow), and run by {@code NativeConsumerExampleTest}. Arrow Java's importer, on a thread of
 * its own, stands in for the native side.
 */
public final class NativeConsumerExample {

  private NativeConsumerExample() {}

  /**
   * Exports what {@code reader} has left to a consumer on {@code consumerThread}, ends the task
   * with {@code endTask}, and lets the consumer read and release: the rows it read.
   */
  public static long run(
      BroadcastReader reader,
      long taskAttemptId,
      BufferAllocator consumerAllocator,
      ExecutorService consumerThread,
      Runnable endTask)
      throws Exception {
    // docs/engines.md: begin
    // In the task: what the reader has left, as one ArrowArrayStream. The struct may be the
    // engine's own memory (ArrowArrayStream.wrap(address)); here Java allocates it.
    ArrowArrayStream stream = ArrowArrayStream.allocateNew(consumerAllocator);
    CDataExport.exportStream(reader, "engine scan of task " + taskAttemptId, stream);
    long address = stream.memoryAddress(); // what the native side is handed

    // The native side reads when it likes, on its own thread, after the task if need be: the
    // export holds the broadcast until the consumer releases the stream.
    Callable<Long> nativeScan =
        () -> {
          long rows = 0;
          try (ArrowReader batches =
              Data.importArrayStream(consumerAllocator, ArrowArrayStream.wrap(address))) {
            while (batches.loadNextBatch()) {
              rows += batches.getVectorSchemaRoot().getRowCount();
            }
          } // closing the import calls the stream's release: the hold ends here
          return rows;
        };
    // docs/engines.md: end
    endTask.run();
    Future<Long> rows = consumerThread.submit(nativeScan);
    try {
      return rows.get();
    } finally {
      stream.close(); // the struct's own memory, released by the consumer already
    }
  }
}
