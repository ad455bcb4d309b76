package dev.quiver.ipc;

import dev.quiver.annotation.Internal;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * A batch's variadic buffer counts: how many data buffers each view column (Utf8View, BinaryView)
 * has beyond its layout's own, in the order of the schema's view columns. Arrow Java has them from
 * 14 on; Quiver's {@code common} compiles against Arrow 11 too, so they are reached by reflection,
 * and on an Arrow without them a batch has none (its schemas have no view types to need them).
 * Public for the Spark columns that read views in place, and for the tests' stream writers.
 */
@Internal
public final class VariadicBufferCounts {

  private static final Method FLAT_LENGTH = method(RecordBatch.class, "variadicBufferCountsLength");
  private static final Method FLAT_COUNT =
      method(RecordBatch.class, "variadicBufferCounts", int.class);
  private static final Method BATCH_COUNTS =
      method(ArrowRecordBatch.class, "getVariadicBufferCounts");
  private static final Constructor<ArrowRecordBatch> WITH_COUNTS = withCounts();

  private VariadicBufferCounts() {}

  /**
   * The counts {@code flat} declares: each 0 or more, all together at most the {@code buffers} the
   * batch has (a count beyond them is garbage, refused before it sizes anything).
   */
  static List<Long> read(RecordBatch flat, int buffers) throws IpcFormatException {
    if (FLAT_LENGTH == null) {
      return Collections.emptyList();
    }
    int declared = (Integer) invoke(FLAT_LENGTH, flat);
    if (declared == 0) {
      return Collections.emptyList();
    }
    if (declared < 0 || declared > buffers) {
      throw new IpcFormatException(
          String.format(
              "the batch declares %d variadic buffer counts for %d buffers", declared, buffers));
    }
    List<Long> counts = new ArrayList<>(declared);
    long total = 0;
    for (int i = 0; i < declared; i++) {
      long count = (Long) invoke(FLAT_COUNT, flat, i);
      if (count < 0 || count > buffers - total) {
        throw new IpcFormatException(
            String.format(
                "variadic buffer count %d is %d; the batch has %d buffers, %d of them counted"
                    + " before",
                i, count, buffers, total));
      }
      total += count;
      counts.add(count);
    }
    return Collections.unmodifiableList(counts);
  }

  /** The counts {@code batch} carries (none on an Arrow without them). */
  @SuppressWarnings("unchecked")
  public static List<Long> of(ArrowRecordBatch batch) {
    if (BATCH_COUNTS == null) {
      return Collections.emptyList();
    }
    try {
      List<Long> counts = (List<Long>) invoke(BATCH_COUNTS, batch);
      return counts == null ? Collections.emptyList() : counts;
    } catch (IpcFormatException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A batch of {@code buffers} with {@code counts}; without counts, Arrow's plain batch. */
  public static ArrowRecordBatch batch(
      int rows, List<ArrowFieldNode> nodes, List<ArrowBuf> buffers, List<Long> counts) {
    if (counts.isEmpty() || WITH_COUNTS == null) {
      return new ArrowRecordBatch(rows, nodes, buffers);
    }
    try {
      return WITH_COUNTS.newInstance(
          rows, nodes, buffers, NoCompressionCodec.DEFAULT_BODY_COMPRESSION, counts, true);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new IllegalStateException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Object invoke(Method method, Object target, Object... args)
      throws IpcFormatException {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      // The flatbuffer's accessors throw on bytes that are not a flatbuffer.
      throw new IpcFormatException("the metadata does not parse", e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Method method(Class<?> type, String name, Class<?>... parameters) {
    try {
      return type.getMethod(name, parameters);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  private static Constructor<ArrowRecordBatch> withCounts() {
    try {
      return ArrowRecordBatch.class.getConstructor(
          int.class, List.class, List.class, ArrowBodyCompression.class, List.class, boolean.class);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }
}
