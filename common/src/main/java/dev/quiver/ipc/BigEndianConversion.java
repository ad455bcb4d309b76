package dev.quiver.ipc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Big-endian streams (a schema whose {@code endianness} is {@code Big}): turns each record or
 * dictionary batch into the same batch with its values in little-endian order, as Arrow C++ does on
 * read, so that the strict reader checks and loads it as any other. Only a buffer's values change
 * order; the IPC metadata is little-endian whatever the schema says.
 *
 * <p>A buffer of multi-byte values (fixed-width values, offsets, list view sizes, dictionary
 * indices) is copied into a fresh buffer of the same length, each value's bytes reversed: every
 * whole value the buffer holds, whatever its field node claims (the layout checks, which run on the
 * result, bound the lengths), and any bytes after the last whole value as they are. A value made of
 * parts is reversed part by part (an interval of days and milliseconds, of months, days and
 * nanoseconds); a decimal is one integer of 16 or 32 bytes. Validity bitmaps and buffers of bytes
 * (booleans, strings, binaries, fixed-size binaries, union type ids) are taken as they are, without
 * a copy. Unions, run-end encoding and list views have no values of their own beyond those; the
 * string and binary views are refused by name.
 *
 * <p>Arrow Java does none of this: its schema reader ignores the flag (and its writer sets it to
 * the JVM's native order), so it reads a big-endian stream's values byte-swapped.
 */
final class BigEndianConversion {

  /** Bytes converted per NIO view: at most 1 GiB, a multiple of every value's width. */
  private static final int VIEW_BYTES = 1 << 30;

  /** The parts of a value whose bytes are taken as they are: none to reverse. */
  private static final int[] BYTES = new int[0];

  /**
   * Marks a string or binary view column's views buffer: 16 bytes a view, whose parts depend on its
   * length ({@link #viewsReversed}). Compared by identity.
   */
  private static final int[] VIEWS = {4, 4, 4, 4};

  /** A string or binary view's bytes, and the most of them a value stored inline may take. */
  private static final int STRING_VIEW_BYTES = 16;

  private static final int INLINE_BYTES = 12;

  private BigEndianConversion() {}

  /**
   * Refuses, naming the column and its type, a schema that holds a type whose values this class
   * cannot put in little-endian order.
   *
   * @param fields the schema's fields as the stream states them (a dictionary-encoded field has its
   *     value type; its index type is an integer, which converts)
   */
  static void checkConvertible(List<Field> fields) throws IpcFormatException {
    for (Field field : fields) {
      if (valueParts(field.getType()) == null) {
        throw new IpcFormatException(
            String.format(
                "column %s has type %s, which Quiver does not convert from big-endian byte order"
                    + " (see docs/reliability.md)",
                field.getName(), field.getType()));
      }
      checkConvertible(field.getChildren());
    }
  }

  /**
   * {@code batch} with its values in little-endian order; {@code batch} stays the caller's. The
   * buffers to reverse are copied into {@code allocator}'s memory, at most {@code bodyLength} bytes
   * in all (the batch's buffers may claim overlapping bytes of the body; converted, they would each
   * take memory of their own).
   *
   * @param fields the vectors the batch will be loaded into, in memory format
   * @param bodyLength the bytes the batch's buffers come from
   * @throws IpcFormatException naming the column, with nothing left allocated
   */
  static ArrowRecordBatch toLittleEndian(
      List<Field> fields, ArrowRecordBatch batch, long bodyLength, BufferAllocator allocator)
      throws IpcFormatException {
    List<ArrowBuf> in = batch.getBuffers();
    List<ArrowBuf> out = new ArrayList<>(in.size());
    try {
      List<int[]> parts = new ArrayList<>(in.size());
      List<Long> variadicCounts = VariadicBufferCounts.of(batch);
      int[] nextCount = {0};
      for (Field field : fields) {
        addParts(field, parts, in.size(), variadicCounts, nextCount);
      }
      long copied = 0;
      for (int i = 0; i < in.size(); i++) {
        ArrowBuf buffer = in.get(i);
        // Buffers beyond the schema's are left to the layout checks, which refuse them.
        int[] valueParts = i < parts.size() ? parts.get(i) : BYTES;
        if (valueParts.length == 0 || buffer.capacity() == 0) {
          buffer.getReferenceManager().retain();
          out.add(buffer);
          continue;
        }
        copied += buffer.capacity();
        if (copied > bodyLength) {
          throw new IpcFormatException(
              String.format(
                  "the batch's buffers to convert from big-endian take %d bytes or more, beyond"
                      + " its %d-byte body (buffers share bytes)",
                  copied, bodyLength));
        }
        out.add(
            valueParts == VIEWS
                ? viewsReversed(buffer, allocator)
                : reversed(buffer, valueParts, allocator));
      }
      // The batch takes its own reference on each buffer; ours are released below.
      return VariadicBufferCounts.batch(batch.getLength(), batch.getNodes(), out, variadicCounts);
    } finally {
      AutoCloseables.closeNoChecked(AutoCloseables.all(out));
    }
  }

  /**
   * Adds the value parts of each buffer of {@code field} and its children, in the batch's order.
   */
  private static void addParts(
      Field field, List<int[]> parts, int buffers, List<Long> variadicCounts, int[] nextCount)
      throws IpcFormatException {
    ArrowType type = field.getType();
    if (isByteView(type)) {
      // Its validity bitmap, its views, then as many data buffers of bytes as its count says (the
      // reader bounded the counts by the batch's buffers; the batch checks match them to columns).
      parts.add(BYTES);
      parts.add(VIEWS);
      long dataBuffers =
          nextCount[0] < variadicCounts.size() ? variadicCounts.get(nextCount[0]++) : 0;
      for (long i = 0; i < dataBuffers && parts.size() < buffers; i++) {
        parts.add(BYTES);
      }
      return;
    }
    for (BufferLayout layout : BatchChecks.bufferLayouts(field)) {
      if (parts.size() >= buffers) {
        throw new IpcFormatException(
            "the batch has too few buffers for column "
                + field.getName()
                + " (fewer than its schema)");
      }
      BufferLayout.BufferType kind = layout.getType();
      if (kind == BufferLayout.BufferType.OFFSET) {
        parts.add(new int[] {layout.getTypeBitWidth() / 8});
      } else if (kind == BufferLayout.BufferType.DATA) {
        parts.add(valueParts(type));
      } else if (kind == BufferLayout.BufferType.VALIDITY || kind == BufferLayout.BufferType.TYPE) {
        // Bits, and a union's one-byte type ids.
        parts.add(BYTES);
      } else if (kind.name().equals("SIZE")) {
        // A list view's sizes, as wide as its offsets (by name: Arrow 11 has no such buffer).
        parts.add(new int[] {layout.getTypeBitWidth() / 8});
      } else {
        throw new IpcFormatException(
            "column "
                + field.getName()
                + " has a "
                + kind
                + " buffer, which Quiver does not convert from big-endian byte order");
      }
    }
    for (Field child : field.getChildren()) {
      addParts(child, parts, buffers, variadicCounts, nextCount);
    }
  }

  /**
   * The widths in bytes of the parts of one value of {@code type}'s data buffer, each reversed on
   * its own ({@link #BYTES} where the bytes stay as they are, or there is no data buffer); null for
   * a type this class does not convert.
   */
  private static int[] valueParts(ArrowType type) {
    switch (type.getTypeID()) {
      case Null:
      case Struct:
      case List:
      case LargeList:
      case FixedSizeList:
      case Map:
      case Bool:
      case Utf8:
      case LargeUtf8:
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
      case Union:
        return BYTES;
      case Int:
        return whole(((ArrowType.Int) type).getBitWidth());
      case FloatingPoint:
        switch (((ArrowType.FloatingPoint) type).getPrecision()) {
          case HALF:
            return whole(16);
          case SINGLE:
            return whole(32);
          default:
            return whole(64);
        }
      case Decimal:
        // Two's complement integers of 128 or 256 bits: one value, all its bytes reversed.
        return whole(((ArrowType.Decimal) type).getBitWidth());
      case Date:
        return whole(((ArrowType.Date) type).getUnit() == DateUnit.DAY ? 32 : 64);
      case Time:
        return whole(((ArrowType.Time) type).getBitWidth());
      case Timestamp:
      case Duration:
        return whole(64);
      case Interval:
        switch (((ArrowType.Interval) type).getUnit()) {
          case YEAR_MONTH:
            return new int[] {4};
          case DAY_TIME:
            return new int[] {4, 4}; // days, milliseconds
          case MONTH_DAY_NANO:
            return new int[] {4, 4, 8}; // months, days, nanoseconds
          default:
            return null;
        }
      default:
        return hasNoDataBuffer(type) ? BYTES : null;
    }
  }

  /**
   * Whether {@code type}, one Arrow 11 does not know, has no data buffer of its own: run-end
   * encoding (its run ends are a child) and the list views (offsets and sizes, converted as such).
   * The string and binary views are not among them: a view's last 8 bytes are a buffer index and an
   * offset or inline bytes, as its length says, which this class does not convert.
   */
  private static boolean hasNoDataBuffer(ArrowType type) {
    switch (type.getTypeID().name()) {
      case "RunEndEncoded":
      case "ListView":
      case "LargeListView":
        return true;
      default:
        return isByteView(type);
    }
  }

  /** {@code Utf8View} or {@code BinaryView}, by name: Arrow 11 has neither. */
  private static boolean isByteView(ArrowType type) {
    String name = type.getTypeID().name();
    return name.equals("Utf8View") || name.equals("BinaryView");
  }

  /**
   * A fresh buffer of {@code buffer}'s length holding its views in little-endian order; the caller
   * owns it. A view's length comes first; a value of up to 12 bytes follows it inline, bytes taken
   * as they are; a longer one has 4 bytes of its prefix, then its data buffer's index and its
   * offset there, both reversed. A view whose length is negative is converted as an inline one: the
   * batch checks refuse it (or leave it unread, in a null row). Bytes after the last whole view are
   * copied as they are.
   */
  private static ArrowBuf viewsReversed(ArrowBuf buffer, BufferAllocator allocator) {
    long length = buffer.capacity();
    ArrowBuf out = allocator.buffer(length);
    try {
      out.setBytes(0, buffer, 0, length);
      // ArrowBuf reads and writes in Arrow's memory order, little-endian: a big-endian int read
      // through it comes out reversed.
      for (long at = 0; at + STRING_VIEW_BYTES <= length; at += STRING_VIEW_BYTES) {
        int valueLength = Integer.reverseBytes(buffer.getInt(at));
        out.setInt(at, valueLength);
        if (valueLength > INLINE_BYTES) {
          out.setInt(at + 8, Integer.reverseBytes(buffer.getInt(at + 8)));
          out.setInt(at + 12, Integer.reverseBytes(buffer.getInt(at + 12)));
        }
      }
      ArrowBuf exact = out.slice(0, length);
      exact.getReferenceManager().retain();
      return exact;
    } finally {
      out.close();
    }
  }

  /**
   * One value of {@code bits} bits, reversed as a whole (a byte stays as it is); null for a width
   * no Arrow type has.
   */
  private static int[] whole(int bits) {
    switch (bits) {
      case 8:
        return BYTES;
      case 16:
      case 32:
      case 64:
      case 128:
      case 256:
        return new int[] {bits / 8};
      default:
        return null;
    }
  }

  /**
   * A fresh buffer of {@code buffer}'s length holding its values, each part of {@code parts} bytes
   * reversed; the caller owns it.
   */
  private static ArrowBuf reversed(ArrowBuf buffer, int[] parts, BufferAllocator allocator) {
    long length = buffer.capacity();
    int valueBytes = 0;
    for (int part : parts) {
      valueBytes += part;
    }
    ArrowBuf out = allocator.buffer(length);
    try {
      for (long from = 0; from < length; from += VIEW_BYTES) {
        int bytes = (int) Math.min(length - from, VIEW_BYTES);
        // Read each part as a big-endian number, write it as a little-endian one.
        ByteBuffer source = buffer.nioBuffer(from, bytes).order(ByteOrder.BIG_ENDIAN);
        ByteBuffer target = out.nioBuffer(from, bytes).order(ByteOrder.LITTLE_ENDIAN);
        int whole = bytes - bytes % valueBytes;
        for (int value = 0; value < whole; value += valueBytes) {
          int at = value;
          for (int part : parts) {
            reverse(source, target, at, part);
            at += part;
          }
        }
        // Bytes after the last whole value (padding) are copied as they are.
        for (int i = whole; i < bytes; i++) {
          target.put(i, source.get(i));
        }
      }
      ArrowBuf exact = out.slice(0, length);
      exact.getReferenceManager().retain();
      return exact;
    } finally {
      out.close();
    }
  }

  /** Reverses the {@code width} bytes at {@code at}: a number read big-endian, written little. */
  private static void reverse(ByteBuffer source, ByteBuffer target, int at, int width) {
    switch (width) {
      case 2:
        target.putShort(at, source.getShort(at));
        break;
      case 4:
        target.putInt(at, source.getInt(at));
        break;
      case 8:
        target.putLong(at, source.getLong(at));
        break;
      default:
        // A 16- or 32-byte integer: its 8-byte words in reverse order, each reversed.
        int words = width / 8;
        for (int w = 0; w < words; w++) {
          target.putLong(at + 8 * (words - 1 - w), source.getLong(at + 8 * w));
        }
    }
  }
}
