package dev.quiver.bench;

import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import org.apache.arrow.memory.BufferAllocator;
import org.openjdk.jmh.annotations.Param;

/**
 * What the benchmarks over one broadcast share: its size, 1M rows in batches of Comet's default
 * size, both JMH parameters.
 */
public abstract class BroadcastBenchmarkBase extends JmhSettings {

  @Param({"1000000"})
  public int rows;

  /** Rows per record batch: Comet's default batch size. */
  @Param({"8192"})
  public int batchRows;

  /** The broadcast's one IPC stream, {@link #rows} rows of {@code shape} through {@code codec}. */
  byte[] encode(BenchBroadcast.Shape shape, StreamCodec codec, BufferAllocator allocator)
      throws IOException {
    return BenchBroadcast.encode(shape, rows, batchRows, codec, allocator);
  }
}
