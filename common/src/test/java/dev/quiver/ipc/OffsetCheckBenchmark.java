package dev.quiver.ipc;

import dev.quiver.bench.JmhSettings;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The decode's offset check on its own, over one column of ascending 4-byte offsets: {@code
 * checked} is {@link LoadedBatchChecks#checkAscending} (one size check, then NIO views of the
 * memory), {@code perValueGetInt} the loop it replaced ({@code ArrowBuf.getInt} per offset, each
 * with its bounds and reference-count checks), kept here as the reference.
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class OffsetCheckBenchmark extends JmhSettings {

  @Param({"1000000"})
  public int values;

  private BufferAllocator allocator;
  private ArrowBuf offsets;

  @Setup(Level.Trial)
  public void fill() {
    allocator = new RootAllocator(Long.MAX_VALUE);
    offsets = allocator.buffer((values + 1L) * 4);
    for (int i = 0; i <= values; i++) {
      offsets.setInt(i * 4L, i * 12);
    }
  }

  @TearDown(Level.Trial)
  public void close() {
    offsets.close();
    allocator.close();
  }

  @Benchmark
  public ArrowBuf checked() throws IpcFormatException {
    LoadedBatchChecks.checkAscending("s", offsets, values + 1L, 4);
    return offsets;
  }

  @Benchmark
  public long perValueGetInt() throws IpcFormatException {
    long previous = 0;
    for (int i = 0; i <= values; i++) {
      long offset = offsets.getInt((long) i * 4);
      if (offset < previous) {
        throw new IpcFormatException("offset " + i + " is below the one before");
      }
      previous = offset;
    }
    return previous;
  }
}
