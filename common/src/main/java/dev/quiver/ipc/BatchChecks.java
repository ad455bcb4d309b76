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
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;

/**
 * The structure checks of a record or dictionary batch, so that loading it allocates nothing the
 * stream does not hold and reading any value of what it loads stays in bounds.
 *
 * <p>Before loading ({@link #checkLayout}): every field node and buffer the schema needs is there,
 * no more; every buffer is as large as its node's length requires; a child has at least the values
 * its parent points at. Arrow's loader would otherwise grow the vectors to the claimed lengths,
 * allocating and zeroing memory for values that do not exist. The one allocation loading still
 * makes is a validity bitmap for a node that has none (no nulls): those may add up to at most the
 * body's length plus {@link #MAX_MADE_VALIDITY_BYTES} per batch.
 *
 * <p>After loading ({@link #checkLoaded}): Arrow's buffer validation, offsets that ascend from 0 or
 * more, and dictionary indices inside their dictionaries.
 */
final class BatchChecks {

  /**
   * Validity bitmaps the loader may make beyond the body's length: for columns without nulls of
   * types whose values take no bytes (nulls, structs of them), 8 million rows' worth.
   */
  static final long MAX_MADE_VALIDITY_BYTES = 1 << 20;

  private BatchChecks() {}

  /** Position in a batch's field nodes and buffers while the schema is walked. */
  private static final class Cursor {
    final List<ArrowFieldNode> nodes;
    final List<ArrowBuf> buffers;
    int node;
    int buffer;
    long madeValidityBytes;

    Cursor(ArrowRecordBatch batch) {
      this.nodes = batch.getNodes();
      this.buffers = batch.getBuffers();
    }
  }

  /**
   * Checks {@code batch} against {@code fields} (the vectors it will be loaded into, in memory
   * format: a dictionary-encoded field has its index type) before it is loaded.
   *
   * @param bodyLength the length of the message body the batch's buffers come from
   */
  static void checkLayout(List<Field> fields, ArrowRecordBatch batch, long bodyLength)
      throws IpcFormatException {
    Cursor cursor = new Cursor(batch);
    for (Field field : fields) {
      if (cursor.node < cursor.nodes.size()) {
        long length = cursor.nodes.get(cursor.node).getLength();
        if (length != batch.getLength()) {
          throw new IpcFormatException(
              String.format(
                  "column %s has %d values in a batch of %d rows",
                  field.getName(), length, batch.getLength()));
        }
      }
      checkField(field, cursor);
    }
    if (cursor.node != cursor.nodes.size() || cursor.buffer != cursor.buffers.size()) {
      throw new IpcFormatException(
          String.format(
              "the batch has %d field nodes and %d buffers; its schema has %d and %d",
              cursor.nodes.size(), cursor.buffers.size(), cursor.node, cursor.buffer));
    }
    if (cursor.madeValidityBytes > bodyLength + MAX_MADE_VALIDITY_BYTES) {
      throw new IpcFormatException(
          String.format(
              "the batch's columns without validity bitmaps would need %d bytes of bitmaps, more"
                  + " than its %d-byte body allows",
              cursor.madeValidityBytes, bodyLength));
    }
  }

  private static void checkField(Field field, Cursor cursor) throws IpcFormatException {
    if (cursor.node >= cursor.nodes.size()) {
      throw new IpcFormatException(
          "the batch has no field node for column " + field.getName() + " (fewer than its schema)");
    }
    ArrowFieldNode node = cursor.nodes.get(cursor.node++);
    long length = node.getLength();
    long nulls = node.getNullCount();
    if (length < 0 || nulls < 0 || nulls > length) {
      throw new IpcFormatException(
          String.format("column %s has %d values and %d nulls", field.getName(), length, nulls));
    }
    List<BufferLayout> layouts = bufferLayouts(field);
    if (cursor.buffer + layouts.size() > cursor.buffers.size()) {
      throw new IpcFormatException(
          "the batch has too few buffers for column "
              + field.getName()
              + " (fewer than its schema)");
    }
    int first = cursor.buffer;
    cursor.buffer += layouts.size();
    long lastOffset = -1;
    for (int i = 0; i < layouts.size(); i++) {
      BufferLayout layout = layouts.get(i);
      ArrowBuf buffer = cursor.buffers.get(first + i);
      long capacity = buffer.capacity();
      BufferLayout.BufferType kind = layout.getType();
      if (kind == BufferLayout.BufferType.VALIDITY) {
        if (capacity == 0 && length > 0) {
          if (nulls != 0 && nulls != length) {
            throw new IpcFormatException(
                String.format(
                    "column %s has %d nulls among %d values but no validity bitmap",
                    field.getName(), nulls, length));
          }
          cursor.madeValidityBytes += (length + 7) / 8;
        } else {
          need(field, "validity bitmap", capacity, (length + 7) / 8);
        }
      } else if (kind == BufferLayout.BufferType.OFFSET) {
        int width = layout.getTypeBitWidth() / 8;
        if (length > 0) {
          need(field, "offsets", capacity, (length + 1) * width);
          lastOffset = width == 4 ? buffer.getInt(length * 4) : buffer.getLong(length * 8);
          long firstOffset = width == 4 ? buffer.getInt(0) : buffer.getLong(0);
          if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IpcFormatException(
                String.format(
                    "column %s: offsets run from %d to %d",
                    field.getName(), firstOffset, lastOffset));
          }
        }
      } else if (kind == BufferLayout.BufferType.DATA) {
        if (lastOffset >= 0) {
          need(field, "data", capacity, lastOffset);
        } else if (!hasOffsets(layouts)) {
          need(field, "data", capacity, fixedWidthBytes(field, layout, length));
        }
      } else {
        throw new IpcFormatException(
            "column " + field.getName() + " has a " + kind + " buffer, which Quiver does not read");
      }
    }
    checkChildren(field, length, lastOffset, cursor);
  }

  private static void checkChildren(Field field, long length, long lastOffset, Cursor cursor)
      throws IpcFormatException {
    List<Field> children = field.getChildren();
    String type = field.getType().getTypeID().name();
    long childValues;
    if (type.equals("Struct")) {
      childValues = length;
    } else if (type.equals("FixedSizeList")) {
      int size = ((ArrowType.FixedSizeList) field.getType()).getListSize();
      childValues = Math.multiplyExact(length, (long) size);
    } else {
      // List, LargeList, Map: the elements the last offset points at.
      childValues = Math.max(lastOffset, 0);
    }
    for (Field child : children) {
      if (cursor.node < cursor.nodes.size()) {
        long childLength = cursor.nodes.get(cursor.node).getLength();
        if (childLength < childValues) {
          throw new IpcFormatException(
              String.format(
                  "column %s has %d values where its parent %s needs %d",
                  child.getName(), childLength, field.getName(), childValues));
        }
      }
      checkField(child, cursor);
    }
  }

  /**
   * The buffers a batch holds for {@code field} itself (not its children), as Arrow lays them out.
   * Refuses a type Arrow has no layout for (a fixed-size binary of a negative width, whose bit
   * width Arrow's layout refuses with a runtime exception).
   */
  static List<BufferLayout> bufferLayouts(Field field) throws IpcFormatException {
    try {
      return TypeLayout.getTypeLayout(field.getType()).getBufferLayouts();
    } catch (RuntimeException e) {
      throw new IpcFormatException(
          String.format(
              "column %s has type %s, which has no buffer layout: %s",
              field.getName(), field.getType(), ArrowIpc.describe(e)),
          e);
    }
  }

  /**
   * The bytes {@code length} values of a fixed-width column take. From the type itself where the
   * layout's int bit width would overflow (a fixed-size binary of over 256 MiB a value).
   */
  static long fixedWidthBytes(Field field, BufferLayout layout, long length)
      throws IpcFormatException {
    ArrowType type = field.getType();
    long bits =
        type instanceof ArrowType.FixedSizeBinary
            ? 8L * ((ArrowType.FixedSizeBinary) type).getByteWidth()
            : layout.getTypeBitWidth();
    if (bits < 0 || (bits > 0 && length > (Long.MAX_VALUE - 7) / bits)) {
      throw new IpcFormatException(
          String.format(
              "column %s: %d values of %d bits each cannot be held",
              field.getName(), length, bits));
    }
    return (length * bits + 7) / 8;
  }

  private static boolean hasOffsets(List<BufferLayout> layouts) {
    for (BufferLayout layout : layouts) {
      if (layout.getType() == BufferLayout.BufferType.OFFSET) {
        return true;
      }
    }
    return false;
  }

  private static void need(Field field, String buffer, long capacity, long needed)
      throws IpcFormatException {
    if (capacity < needed) {
      throw new IpcFormatException(
          String.format(
              "column %s: its %s buffer has %d bytes, %d needed",
              field.getName(), buffer, capacity, needed));
    }
  }

  /**
   * Checks the vectors a batch was loaded into: Arrow's buffer validation (sizes, and the last
   * offset inside the data) and offsets that ascend between.
   */
  static void checkLoaded(List<FieldVector> vectors) throws IpcFormatException {
    ValidateVectorBufferVisitor buffers = new ValidateVectorBufferVisitor();
    for (FieldVector vector : vectors) {
      try {
        vector.accept(buffers, null);
      } catch (RuntimeException e) {
        throw new IpcFormatException(
            "column " + vector.getField().getName() + ": " + ArrowIpc.describe(e), e);
      }
      checkOffsets(vector);
    }
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
