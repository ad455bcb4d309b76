package dev.quiver.bench;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One full decode of a broadcast-shaped Arrow IPC stream (long, int, double and string columns)
 * compressed with Spark's lz4 codec, against the floor: the same bytes through plain lz4
 * decompression into a byte array. {@code decodeUncompressed} decodes the same IPC stream stored
 * without compression, to split the decode's cost between decompression and IPC.
 *
 * <p>The lz4 bytes are read two ways, side by side: through Quiver's reader of the framing ({@code
 * decode}, {@code lz4Floor}: {@code SparkStreamCodec.LZ4}, the safe decompressor) and through what
 * Spark's {@code LZ4CompressionCodec} builds ({@code decodeSparkLz4}, {@code lz4FloorSparkLz4}:
 * lz4-java's {@code LZ4BlockInputStream} with the fast decompressor and Spark's checksum), which is
 * safe here only because the bytes are the benchmark's own.
 */
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class DecodeBenchmark extends BroadcastBenchmarkBase {

  private BufferAllocator allocator;
  private byte[] lz4Stream;
  private byte[] rawStream;
  private byte[] floorTarget;

  @Setup(Level.Trial)
  public void encode() throws IOException {
    allocator = new RootAllocator();
    lz4Stream = encode(BenchBroadcast.Shape.MIXED, SparkStreamCodec.LZ4, allocator);
    rawStream = encode(BenchBroadcast.Shape.MIXED, StreamCodec.NONE, allocator);
    floorTarget = new byte[rawStream.length];
    long decodedBytes;
    try (DecodedStream decoded = decodeLz4()) {
      decodedBytes = allocator.getAllocatedMemory();
      if (decoded.rowCount() != rows) {
        throw new IllegalStateException("decoded " + decoded.rowCount() + " rows");
      }
    }
    for (StreamCodec codec : new StreamCodec[] {SparkStreamCodec.LZ4, SPARK_LZ4}) {
      if (decompressAll(codec) != rawStream.length || !Arrays.equals(floorTarget, rawStream)) {
        throw new IllegalStateException("lz4 floor read other bytes through " + codec);
      }
      Arrays.fill(floorTarget, (byte) 0);
    }
    System.out.printf(
        "%n[DecodeBenchmark] %d rows in batches of %d: IPC stream %,d bytes, lz4 %,d bytes"
            + " (%.2fx), decoded into %,d bytes of Arrow buffers%n",
        rows,
        batchRows,
        rawStream.length,
        lz4Stream.length,
        (double) rawStream.length / lz4Stream.length,
        decodedBytes);
  }

  @TearDown(Level.Trial)
  public void close() {
    allocator.close();
  }

  private DecodedStream decodeLz4() throws IOException {
    return ArrowIpc.decode(lz4Stream, SparkStreamCodec.LZ4, allocator, "bench");
  }

  /** The seed Spark's lz4 codec gives its block checksums. */
  private static final int SPARK_LZ4_SEED = 0x9747b28c;

  /** Spark's {@code LZ4CompressionCodec.compressedInputStream}, exactly. */
  static final StreamCodec SPARK_LZ4 =
      new StreamCodec() {
        // lz4-java 1.11 (Spark 4.2's) deprecates this constructor; Spark 3.4 to 4.1 read this way.
        @SuppressWarnings("deprecation")
        @Override
        public InputStream decompress(InputStream in) {
          return new LZ4BlockInputStream(
              in,
              LZ4Factory.fastestInstance().fastDecompressor(),
              XXHashFactory.fastestInstance().newStreamingHash32(SPARK_LZ4_SEED).asChecksum(),
              false);
        }

        @Override
        public OutputStream compress(OutputStream out) {
          throw new UnsupportedOperationException("read only");
        }

        @Override
        public String toString() {
          return "Spark's LZ4BlockInputStream";
        }
      };

  /** Decompress, decode into Arrow buffers, release them. */
  @Benchmark
  public long decode(InvocationCpu cpu) throws IOException {
    return cpu.count(() -> rowsThenClose(decodeLz4()));
  }

  /** {@link #decode} with the lz4 bytes read as Spark's own codec reads them. */
  @Benchmark
  public long decodeSparkLz4(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> rowsThenClose(ArrowIpc.decode(lz4Stream, SPARK_LZ4, allocator, "bench")));
  }

  /** The same IPC stream without compression: the IPC decode alone. */
  @Benchmark
  public long decodeUncompressed(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> rowsThenClose(ArrowIpc.decode(rawStream, StreamCodec.NONE, allocator, "bench")));
  }

  /** The floor: the lz4 bytes decompressed into a byte array, nothing else. */
  @Benchmark
  public int lz4Floor(InvocationCpu cpu) throws IOException {
    return cpu.count(() -> decompressAll(SparkStreamCodec.LZ4));
  }

  /** {@link #lz4Floor} through Spark's own codec's reader. */
  @Benchmark
  public int lz4FloorSparkLz4(InvocationCpu cpu) throws IOException {
    return cpu.count(() -> decompressAll(SPARK_LZ4));
  }

  /** The rows of a stream just decoded; its buffers are released before this returns. */
  private static long rowsThenClose(DecodedStream decoded) {
    try (decoded) {
      return decoded.rowCount();
    }
  }

  private int decompressAll(StreamCodec codec) throws IOException {
    byte[] target = floorTarget;
    int total = 0;
    try (InputStream in = codec.decompress(new ByteArrayInputStream(lz4Stream))) {
      int n;
      while (total < target.length && (n = in.read(target, total, target.length - total)) > 0) {
        total += n;
      }
      if (in.read() >= 0) {
        throw new IllegalStateException("more bytes than the IPC stream");
      }
    }
    return total;
  }
}
