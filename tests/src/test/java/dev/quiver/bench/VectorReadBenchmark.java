package dev.quiver.bench;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.DecodedBroadcastCache;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.FakeTask;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.spark.sql.quiver.broadcast.ColumnarBatches;
import org.apache.spark.sql.quiver.vectors.ValidatedColumns;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The broadcast read path's per-task costs on a decoded 1M-row long/long/string entry (Spark's lz4,
 * batches of 8192 rows): {@code getLong} over every row of one long column through Spark's {@code
 * ArrowColumnVector} against Quiver's validated columns, and one task's view of the whole shared
 * entry (every batch as a {@code ColumnarBatch}, no value read) the way the read path made it
 * before (a {@code VectorSchemaRoot}, a {@code VectorLoader} and {@code ArrowColumnVector}s per
 * batch) and the way it does now, against one full decode of the same bytes.
 *
 * <p>Run from the repository root (builds tests/ into target-jmh-vec folders):
 *
 * <pre>
 * mvn -q -B -o -pl tests -am -Dquiver.build.dir=target-jmh-vec -DskipTests \
 *   -Dspotless.check.skip=true -Dscalafix.skip=true test-compile exec:exec@bench \
 *   -Dbench.main=org.openjdk.jmh.Main -Dbench.args="VectorReadBenchmark"
 * </pre>
 */
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {
      "-Xmx2g",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
    })
@Warmup(iterations = 3, time = 2)
public class VectorReadBenchmark extends BroadcastBenchmarkBase {

  private BufferAllocator allocator;
  private byte[] lz4Stream;
  private DecodedStream decoded;
  private final List<VectorSchemaRoot> loaded = new ArrayList<>();
  private final List<ColumnarBatch> arrowBatches = new ArrayList<>();
  private ValidatedColumns validated;
  private DecodedBroadcastCache cache;
  private BenchBroadcast source;
  private FakeTask holder;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    allocator = new RootAllocator();
    lz4Stream = encode(BenchBroadcast.Shape.BUILD_SIDE, SparkStreamCodec.LZ4, allocator);
    decoded = ArrowIpc.decode(lz4Stream, SparkStreamCodec.LZ4, allocator, "bench");
    for (ArrowRecordBatch batch : decoded.batches()) {
      VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator);
      new VectorLoader(root).load(batch);
      loaded.add(root);
      ColumnVector[] columns = new ColumnVector[root.getFieldVectors().size()];
      for (int i = 0; i < columns.length; i++) {
        columns[i] = new ArrowColumnVector(root.getVector(i));
      }
      arrowBatches.add(new ColumnarBatch(columns, root.getRowCount()));
    }
    validated = ValidatedColumns.forSchema(decoded.schema()).get();
    if (sumArrowColumnVector() != sumValidatedColumns()) {
      throw new IllegalStateException("the two vectors read different sums");
    }
    cache = new DecodedBroadcastCache(allocator);
    source = new BenchBroadcast(1, lz4Stream, SparkStreamCodec.LZ4);
    // One task holds the entry for the whole trial, so every measured task reads it shared.
    holder = new FakeTask();
    cache.open(source, holder, true);
    if (viewNow() != rows || viewBefore() != rows) {
      throw new IllegalStateException("a view read the wrong number of rows");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    holder.complete();
    cache.close();
    loaded.forEach(VectorSchemaRoot::close);
    decoded.close();
    allocator.close();
  }

  /** {@code getLong} over every row of the first long column, through Spark's Arrow vectors. */
  @Benchmark
  public long sumArrowColumnVector() {
    long sum = 0;
    for (ColumnarBatch batch : arrowBatches) {
      sum += sumFirstColumn(batch);
    }
    return sum;
  }

  /** The same through Quiver's validated columns, loaded from each decoded batch in turn. */
  @Benchmark
  public long sumValidatedColumns() {
    long sum = 0;
    for (ArrowRecordBatch decodedBatch : decoded.batches()) {
      sum += sumFirstColumn(validated.load(decodedBatch));
    }
    return sum;
  }

  /** The consumer both sums share: {@code getLong} over every row of the batch's first column. */
  private static long sumFirstColumn(ColumnarBatch batch) {
    ColumnVector column = batch.column(0);
    int n = batch.numRows();
    long sum = 0;
    for (int i = 0; i < n; i++) {
      sum += column.getLong(i);
    }
    return sum;
  }

  /** One full decode of the entry's compressed bytes, released after. */
  @Benchmark
  public long fullDecode() throws IOException {
    try (DecodedStream stream =
        ArrowIpc.decode(lz4Stream, SparkStreamCodec.LZ4, allocator, "bench")) {
      return stream.rowCount();
    }
  }

  /** One task's view of the shared entry through the read path as it is now. */
  @Benchmark
  public long viewNow() throws IOException {
    FakeTask task = new FakeTask();
    ColumnarBatches batches = new ColumnarBatches(cache.open(source, task, true));
    long seen = 0;
    while (batches.hasNext()) {
      seen += batches.next().numRows();
    }
    task.complete();
    return seen;
  }

  /** The same as the read path made it before: a root, a loader and Arrow's vectors per batch. */
  @Benchmark
  public long viewBefore() throws IOException {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(source, task, true);
    long seen = 0;
    while (reader.next()) {
      VectorSchemaRoot root = reader.current();
      ColumnVector[] columns = new ColumnVector[root.getFieldVectors().size()];
      for (int i = 0; i < columns.length; i++) {
        columns[i] = new ArrowColumnVector(root.getVector(i));
      }
      seen += new ColumnarBatch(columns, root.getRowCount()).numRows();
    }
    task.complete();
    return seen;
  }
}
