package dev.quiver.bench;

import dev.quiver.broadcast.BroadcastSource;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.testing.InMemoryBroadcast;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Broadcast-shaped Arrow IPC streams for the benchmarks, encoded in memory with {@link
 * ArrowIpc#encode}, and an in-memory {@link BroadcastSource} over one of them.
 */
final class BenchBroadcast extends InMemoryBroadcast {

  /** What the rows hold. */
  enum Shape {
    /** {@code k} long, {@code i} int, {@code d} double, {@code s} string. */
    MIXED,
    /** {@link TestData#buildSide}: {@code k} long, {@code v} long, {@code s} string. */
    BUILD_SIDE
  }

  /** One stream, of unknown length as the benchmarks have always read it. */
  BenchBroadcast(long id, byte[] stream, StreamCodec codec) {
    super(id, codec, List.of(stream), false);
  }

  byte[] bytes() {
    return streamBytes(0);
  }

  /**
   * One IPC stream of {@code rows} rows in batches of {@code batchRows}, compressed with {@code
   * codec}.
   */
  static byte[] encode(
      Shape shape, int rows, int batchRows, StreamCodec codec, BufferAllocator allocator)
      throws IOException {
    List<ArrowRecordBatch> batches = batches(shape, rows, batchRows, allocator);
    try {
      return ArrowIpc.encode(
          schema(shape), batches, new DictionaryProvider.MapDictionaryProvider(), codec, allocator);
    } finally {
      for (ArrowRecordBatch batch : batches) {
        batch.close();
      }
    }
  }

  static Schema schema(Shape shape) {
    return shape == Shape.MIXED ? mixedSchema() : TestData.buildSideSchema();
  }

  /** {@code rows} rows of {@code shape} in batches of {@code batchRows}; the caller closes them. */
  static List<ArrowRecordBatch> batches(
      Shape shape, int rows, int batchRows, BufferAllocator allocator) {
    List<ArrowRecordBatch> batches = new ArrayList<>();
    try {
      for (int first = 0; first < rows; first += batchRows) {
        int n = Math.min(batchRows, rows - first);
        try (VectorSchemaRoot root =
            shape == Shape.MIXED
                ? mixed(allocator, first, n)
                : TestData.buildSide(allocator, first, n)) {
          batches.add(new VectorUnloader(root).getRecordBatch());
        }
      }
      return batches;
    } catch (RuntimeException e) {
      batches.forEach(ArrowRecordBatch::close);
      throw e;
    }
  }

  static Schema mixedSchema() {
    return new Schema(
        Arrays.asList(
            nullable("k", new ArrowType.Int(64, true)),
            nullable("i", new ArrowType.Int(32, true)),
            nullable("d", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            nullable("s", ArrowType.Utf8.INSTANCE)));
  }

  private static Field nullable(String name, ArrowType type) {
    return new Field(name, FieldType.nullable(type), null);
  }

  /** Rows {@code [first, first + n)} of the mixed shape; strings of 8 to 19 bytes. */
  private static VectorSchemaRoot mixed(BufferAllocator allocator, long first, int n) {
    return TestData.keyedRows(
        mixedSchema(),
        allocator,
        first,
        n,
        root -> {
          IntVector i = (IntVector) root.getVector("i");
          Float8Vector d = (Float8Vector) root.getVector("d");
          VarCharVector s = (VarCharVector) root.getVector("s");
          return (r, key) -> {
            i.setSafe(r, (int) (key * 2_654_435_761L));
            d.setSafe(r, key * 0.25);
            s.setSafe(
                r,
                ("name-" + key + "-" + Long.toHexString(key * 31))
                    .getBytes(StandardCharsets.UTF_8));
          };
        });
  }
}
