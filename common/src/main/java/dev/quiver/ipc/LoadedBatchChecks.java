package dev.quiver.ipc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;

/**
 * The checks of a batch after Arrow loaded it into vectors, beside {@link BatchChecks}' before:
 * Arrow's buffer validation, offsets that ascend, and dictionary indices inside their dictionary.
 */
final class LoadedBatchChecks {

  private LoadedBatchChecks() {}

  /**
   * Checks the vectors a batch was loaded into: Arrow's buffer validation (sizes, and the last
   * offset inside the data) and offsets that ascend between.
   */
  static void checkLoaded(List<FieldVector> vectors) throws IpcFormatException {
    ValidateVectorBufferVisitor buffers = new ValidateVectorBufferVisitor();
    for (FieldVector vector : vectors) {
      validateBuffers(vector, buffers);
      checkOffsets(vector);
    }
  }

  /**
   * Arrow's buffer validation of {@code vector}, except where it has views: Arrow's visitor throws
   * on a view vector (string, binary or list), and on a container of one as it recurses. Views were
   * checked before loading ({@link BatchChecks}), and so was a container's own layout; the other
   * vectors below are validated on their own.
   */
  private static void validateBuffers(FieldVector vector, ValidateVectorBufferVisitor buffers)
      throws IpcFormatException {
    if (!hasViews(vector.getField())) {
      try {
        vector.accept(buffers, null);
      } catch (RuntimeException e) {
        throw new IpcFormatException(
            "column " + vector.getField().getName() + ": " + ArrowIpc.describe(e), e);
      }
    } else {
      for (FieldVector child : vector.getChildrenFromFields()) {
        validateBuffers(child, buffers);
      }
    }
  }

  /** Whether {@code field} or a field below it is of a view type. */
  private static boolean hasViews(Field field) {
    String typeId = field.getType().getTypeID().name();
    if (BatchChecks.isStringView(field)
        || typeId.equals("ListView")
        || typeId.equals("LargeListView")) {
      return true;
    }
    for (Field child : field.getChildren()) {
      if (hasViews(child)) {
        return true;
      }
    }
    return false;
  }

  /** Checks that the offsets of {@code vector} and its children start at 0 or more and ascend. */
  private static void checkOffsets(FieldVector vector) throws IpcFormatException {
    int width;
    if (vector instanceof BaseVariableWidthVector || vector instanceof ListVector) {
      width = 4;
    } else if (vector instanceof BaseLargeVariableWidthVector
        || vector instanceof LargeListVector) {
      width = 8;
    } else {
      width = 0;
    }
    if (width > 0 && vector.getValueCount() > 0) {
      checkAscending(
          vector.getField().getName(),
          vector.getOffsetBuffer(),
          vector.getValueCount() + 1L,
          width);
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      checkOffsets(child);
    }
  }

  /** Offsets viewed at once: at most 1 GiB, so that a view's byte length fits an int. */
  private static final int VIEW_OFFSETS = 1 << 27;

  /**
   * Checks that {@code count} offsets of {@code width} bytes in {@code offsets} start at 0 or more
   * and ascend. The buffer's size is checked once, up front; then the offsets are read in one pass
   * through NIO views of its memory, without the bounds and reference-count checks that {@link
   * ArrowBuf#getInt} makes per value. The views read in native order, as {@code ArrowBuf} does.
   */
  static void checkAscending(String column, ArrowBuf offsets, long count, int width)
      throws IpcFormatException {
    long needed = Math.multiplyExact(count, (long) width);
    if (offsets.capacity() < needed) {
      throw new IpcFormatException(
          String.format(
              "column %s: its offsets buffer has %d bytes, %d needed",
              column, offsets.capacity(), needed));
    }
    long previous = 0;
    for (long first = 0; first < count; first += VIEW_OFFSETS) {
      int values = (int) Math.min(count - first, VIEW_OFFSETS);
      ByteBuffer view =
          offsets.nioBuffer(first * width, values * width).order(ByteOrder.nativeOrder());
      if (width == 4) {
        IntBuffer ints = view.asIntBuffer();
        for (int i = 0; i < values; i++) {
          int offset = ints.get(i);
          if (offset < previous) {
            throw belowPrevious(column, first + i, offset, previous);
          }
          previous = offset;
        }
      } else {
        LongBuffer longs = view.asLongBuffer();
        for (int i = 0; i < values; i++) {
          long offset = longs.get(i);
          if (offset < previous) {
            throw belowPrevious(column, first + i, offset, previous);
          }
          previous = offset;
        }
      }
    }
  }

  private static IpcFormatException belowPrevious(
      String column, long index, long offset, long previous) {
    return new IpcFormatException(
        String.format("column %s: offset %d is %d, below %d", column, index, offset, previous));
  }

  /** Checks that every non-null index of a dictionary-encoded vector lies inside its dictionary. */
  static void checkIndices(FieldVector indices, long dictionaryId, int dictionarySize)
      throws IpcFormatException {
    if (!(indices instanceof BaseIntVector)) {
      throw new IpcFormatException(
          "column "
              + indices.getField().getName()
              + " is dictionary-encoded with a non-integer index type");
    }
    BaseIntVector ints = (BaseIntVector) indices;
    for (int i = 0; i < indices.getValueCount(); i++) {
      if (!indices.isNull(i)) {
        long index = ints.getValueAsLong(i);
        if (index < 0 || index >= dictionarySize) {
          throw new IpcFormatException(
              String.format(
                  "column %s: row %d has index %d into dictionary %d of %d values",
                  indices.getField().getName(), i, index, dictionaryId, dictionarySize));
        }
      }
    }
  }
}
