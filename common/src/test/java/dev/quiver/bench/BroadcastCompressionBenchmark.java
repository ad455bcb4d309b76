package dev.quiver.bench;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What Spark's broadcast compression adds to a broadcast of Quiver's streams, which are compressed
 * already (issue 30, item 5; Comet's issue 2216 asks the same of Comet's). With {@code
 * spark.broadcast.compress} on (Spark's default), {@code TorrentBroadcast} passes the serialized
 * value through the application's codec again: the driver compresses it once, and every executor
 * that fetches it decompresses it once. Measured here on the main job's build side (1M rows of
 * {@code k} long, {@code v} long, {@code s} string) against the broadcast's own work on the same
 * bytes: the driver's encode of the Arrow batches into an IPC stream compressed with Spark's lz4 or
 * zstd codec, and an executor's decode.
 *
 * <p>The second pass is Spark's lz4 codec exactly: lz4-java's {@code LZ4BlockOutputStream} with 32
 * KiB blocks and Spark's checksum seed ({@code SparkStreamCodec.LZ4} writes what Spark writes), and
 * Spark's {@code LZ4BlockInputStream} with the fast decompressor to read it back. The serializer's
 * few bytes around the value are left out.
 */
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class BroadcastCompressionBenchmark extends BroadcastBenchmarkBase {

  /** The codec of Quiver's streams ({@code spark.io.compression.codec}'s names). */
  @Param({"lz4", "zstd"})
  public String codec;

  private SparkStreamCodec streamCodec;
  private BufferAllocator allocator;
  private List<ArrowRecordBatch> batches;
  private byte[] stream;
  private byte[] compressedAgain;
  private byte[] readBack;

  @Setup(Level.Trial)
  public void encode() throws IOException {
    streamCodec = SparkStreamCodec.forName(codec);
    allocator = new RootAllocator();
    batches = BenchBroadcast.batches(BenchBroadcast.Shape.BUILD_SIDE, rows, batchRows, allocator);
    stream = encodeStream();
    compressedAgain = compressAgain();
    readBack = new byte[stream.length];
    if (decompressAgain() != stream.length || !Arrays.equals(readBack, stream)) {
      throw new IllegalStateException("Spark's second lz4 pass did not give the stream back");
    }
    byte[] plain =
        BenchBroadcast.encode(
            BenchBroadcast.Shape.BUILD_SIDE, rows, batchRows, StreamCodec.NONE, allocator);
    System.out.printf(
        "%n[BroadcastCompressionBenchmark] %d rows: IPC stream %,d bytes; Quiver's %s %,d bytes;"
            + " after Spark's broadcast compression %,d bytes (%.4fx)%n",
        rows,
        plain.length,
        codec,
        stream.length,
        compressedAgain.length,
        (double) compressedAgain.length / stream.length);
  }

  @TearDown(Level.Trial)
  public void close() {
    batches.forEach(ArrowRecordBatch::close);
    allocator.close();
  }

  private byte[] encodeStream() throws IOException {
    return ArrowIpc.encode(
        BenchBroadcast.schema(BenchBroadcast.Shape.BUILD_SIDE),
        batches,
        new DictionaryProvider.MapDictionaryProvider(),
        streamCodec,
        allocator);
  }

  private byte[] compressAgain() throws IOException {
    ByteArrayOutputStream wire = new ByteArrayOutputStream(stream.length + stream.length / 64);
    try (OutputStream out = SparkStreamCodec.LZ4.compress(wire)) {
      out.write(stream);
    }
    return wire.toByteArray();
  }

  private int decompressAgain() throws IOException {
    try (InputStream in =
        DecodeBenchmark.SPARK_LZ4.decompress(new ByteArrayInputStream(compressedAgain))) {
      int total = 0;
      for (int n; (n = in.read(readBack, total, readBack.length - total)) > 0; ) {
        total += n;
      }
      return total;
    }
  }

  /** The driver's part of the broadcast: Arrow batches into one lz4-compressed IPC stream. */
  @Benchmark
  public int driverEncode(InvocationCpu cpu) throws IOException {
    return cpu.count(() -> encodeStream().length);
  }

  /** An executor's part: the stream decoded into Arrow buffers (released at once). */
  @Benchmark
  public long executorDecode(InvocationCpu cpu) throws IOException {
    return cpu.count(
        () -> {
          try (DecodedStream decoded = ArrowIpc.decode(stream, streamCodec, allocator, "bench")) {
            return decoded.rowCount();
          }
        });
  }

  /** Spark's broadcast compression of the stream, on the driver. */
  @Benchmark
  public int sparkCompress(InvocationCpu cpu) throws IOException {
    return cpu.count(() -> compressAgain().length);
  }

  /** Spark's broadcast decompression of it, on each executor that fetches it. */
  @Benchmark
  public int sparkDecompress(InvocationCpu cpu) throws IOException {
    return cpu.count(this::decompressAgain);
  }
}
