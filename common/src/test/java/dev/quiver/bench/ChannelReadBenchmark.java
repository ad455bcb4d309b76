package dev.quiver.bench;

import dev.quiver.io.PiecewiseInputChannel;
import dev.quiver.io.PiecewiseReads;
import dev.quiver.testing.CountingInputStream;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Reads a 64 MiB local file wrapped the way Spark wraps a shuffle stream (a {@link
 * BufferedInputStream} over a {@link FilterInputStream} over a {@link FileInputStream}, so not a
 * plain {@code FileInputStream} and {@code Channels.newChannel} cannot hand out a {@code
 * FileChannel}) through Quiver's readers and through the JDK's.
 *
 * <p>One operation is one MiB, so the {@code ops/s} column is MiB/s. The auxiliary counters give,
 * per pass over the file, the {@code available()} and {@code read} calls the reader made on the
 * outermost stream ({@code availableCalls}, {@code readCalls}) and those that reached the {@code
 * FileInputStream} ({@code fileAvailableCalls}, {@code fileReadCalls}; each {@code available()}
 * there is an {@code fstat} and an {@code lseek}).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@OperationsPerInvocation(ChannelReadBenchmark.FILE_MIB)
public class ChannelReadBenchmark extends JmhSettings {

  static final int FILE_MIB = 64;
  private static final int MIB = 1024 * 1024;

  /** Spark's {@code spark.shuffle.file.buffer}-sized buffering of a local shuffle stream. */
  private static final int STREAM_BUFFER = 32 * 1024;

  private File file;
  private ByteBuffer direct;
  private ByteBuffer heap;

  /** Stream calls of the last pass over the file, each reported as the per-pass figure. */
  @AuxCounters(AuxCounters.Type.EVENTS)
  @State(Scope.Thread)
  public static class Calls extends IterationCounters {
    public double availableCalls;
    public double readCalls;
    public double fileAvailableCalls;
    public double fileReadCalls;

    void record(Opened in) {
      availableCalls = perIteration((double) in.outer.counts().availableCalls());
      readCalls = perIteration((double) in.outer.counts().reads());
      fileAvailableCalls = perIteration((double) in.file.counts().availableCalls());
      fileReadCalls = perIteration((double) in.file.counts().reads());
    }
  }

  /** An opened stream chain, with a counter at each end. */
  static final class Opened {
    final CountingInputStream outer;
    final CountingInputStream file;

    Opened(CountingInputStream outer, CountingInputStream file) {
      this.outer = outer;
      this.file = file;
    }
  }

  @Setup(Level.Trial)
  public void writeFile() throws IOException {
    file = File.createTempFile("quiver-jmh-", ".bin");
    file.deleteOnExit();
    byte[] randomMib = new byte[MIB];
    new Random(42).nextBytes(randomMib);
    try (OutputStream out = new FileOutputStream(file)) {
      for (int i = 0; i < FILE_MIB; i++) {
        out.write(randomMib);
      }
    }
    direct = ByteBuffer.allocateDirect(MIB);
    heap = ByteBuffer.allocate(MIB);
  }

  @TearDown(Level.Trial)
  public void deleteFile() throws IOException {
    Files.deleteIfExists(file.toPath());
  }

  /**
   * The stream as a Spark shuffle reader sees a local block: buffered, filtered, not a plain {@code
   * FileInputStream}.
   */
  private Opened open() throws IOException {
    CountingInputStream raw = new CountingInputStream(new FileInputStream(file));
    return new Opened(new CountingInputStream(new BufferedInputStream(raw, STREAM_BUFFER)), raw);
  }

  /** {@link #open}, its CPU time counted from before the open. */
  private Opened openTimed(InvocationCpu cpu) throws IOException {
    cpu.start();
    return open();
  }

  /**
   * The end of a pass that read {@code bytes} from {@code in}: the CPU time stops (before the
   * stream is closed), the length is checked and the stream calls recorded.
   */
  private static long passDone(Opened in, long bytes, Calls calls, InvocationCpu cpu) {
    cpu.stop();
    check(bytes);
    calls.record(in);
    return bytes;
  }

  private static long drain(ReadableByteChannel channel, ByteBuffer buffer) throws IOException {
    long total = 0;
    buffer.clear();
    int n;
    while ((n = channel.read(buffer)) >= 0) {
      total += n;
      if (!buffer.hasRemaining()) {
        buffer.clear();
      }
    }
    return total;
  }

  private static void check(long bytes) {
    if (bytes != (long) FILE_MIB * MIB) {
      throw new IllegalStateException("read " + bytes + " bytes");
    }
  }

  // (a) A channel read into a direct 1 MiB buffer, call after call.

  @Benchmark
  public long channelPiecewise(Calls calls, InvocationCpu cpu) throws IOException {
    Opened in = openTimed(cpu);
    try (ReadableByteChannel channel = new PiecewiseInputChannel(in.outer)) {
      long bytes = drain(channel, direct);
      return passDone(in, bytes, calls, cpu);
    }
  }

  @Benchmark
  public long channelJdk(Calls calls, InvocationCpu cpu) throws IOException {
    Opened in = openTimed(cpu);
    try (ReadableByteChannel channel = Channels.newChannel(in.outer)) {
      long bytes = drain(channel, direct);
      return passDone(in, bytes, calls, cpu);
    }
  }

  // (b) Fill a 1 MiB buffer completely, again and again.

  private long readFullyPiecewise(ByteBuffer buffer, Calls calls, InvocationCpu cpu, Blackhole bh)
      throws IOException {
    Opened in = openTimed(cpu);
    try (InputStream stream = in.outer) {
      long total = 0;
      while (true) {
        buffer.clear();
        int n = PiecewiseReads.readFully(stream, buffer);
        total += n;
        bh.consume(buffer.get(0));
        if (buffer.hasRemaining()) {
          break;
        }
      }
      return passDone(in, total, calls, cpu);
    }
  }

  private long readFullyJdk(ByteBuffer buffer, Calls calls, InvocationCpu cpu, Blackhole bh)
      throws IOException {
    Opened in = openTimed(cpu);
    try (ReadableByteChannel channel = Channels.newChannel(in.outer)) {
      long total = 0;
      boolean eof = false;
      while (!eof) {
        buffer.clear();
        while (buffer.hasRemaining()) {
          int n = channel.read(buffer);
          if (n < 0) {
            eof = true;
            break;
          }
          total += n;
        }
        bh.consume(buffer.get(0));
      }
      return passDone(in, total, calls, cpu);
    }
  }

  @Benchmark
  public long readFullyPiecewiseDirect(Calls calls, InvocationCpu cpu, Blackhole bh)
      throws IOException {
    return readFullyPiecewise(direct, calls, cpu, bh);
  }

  @Benchmark
  public long readFullyPiecewiseHeap(Calls calls, InvocationCpu cpu, Blackhole bh)
      throws IOException {
    return readFullyPiecewise(heap, calls, cpu, bh);
  }

  @Benchmark
  public long readFullyJdkDirect(Calls calls, InvocationCpu cpu, Blackhole bh) throws IOException {
    return readFullyJdk(direct, calls, cpu, bh);
  }

  @Benchmark
  public long readFullyJdkHeap(Calls calls, InvocationCpu cpu, Blackhole bh) throws IOException {
    return readFullyJdk(heap, calls, cpu, bh);
  }
}
