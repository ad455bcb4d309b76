package dev.quiver.ipc;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

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
 * <p>After loading ({@link LoadedBatchChecks#checkLoaded}): Arrow's buffer validation, offsets that
 * ascend from 0 or more, and dictionary indices inside their dictionaries.
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
    final List<Long> variadicCounts;
    int node;
    int buffer;
    int variadic;
    long madeValidityBytes;

    Cursor(ArrowRecordBatch batch) {
      this.nodes = batch.getNodes();
      this.buffers = batch.getBuffers();
      this.variadicCounts = VariadicBufferCounts.of(batch);
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
    if (cursor.variadic != cursor.variadicCounts.size()) {
      throw new IpcFormatException(
          String.format(
              "the batch has %d variadic buffer counts; its schema has %d view columns",
              cursor.variadicCounts.size(), cursor.variadic));
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
    ArrowType type = field.getType();
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
    String typeId = type.getTypeID().name();
    if (typeId.equals("Union")) {
      checkUnion(field, length, cursor);
      return;
    }
    if (typeId.equals("RunEndEncoded")) {
      checkRunEndEncoded(field, length, nulls, cursor);
      return;
    }
    if (isStringView(field)) {
      checkViews(field, length, nulls, cursor);
      return;
    }
    if (typeId.equals("ListView") || typeId.equals("LargeListView")) {
      checkListView(field, length, nulls, cursor, typeId.equals("ListView") ? 4 : 8);
      return;
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
        checkValidity(field, buffer, length, nulls, cursor);
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

  /**
   * A union (V5 metadata: no validity bitmap): one type id byte a value, each one the union
   * declares; a sparse union's children at least as long as it; a dense union's 32-bit offsets each
   * inside the child its type id selects, ascending per child.
   */
  private static void checkUnion(Field field, long length, Cursor cursor)
      throws IpcFormatException {
    ArrowType.Union union = (ArrowType.Union) field.getType();
    boolean dense = union.getMode() == UnionMode.Dense;
    ArrowBuf typeIds = nextBuffer(field, cursor);
    ArrowBuf offsets = dense ? nextBuffer(field, cursor) : null;
    need(field, "type ids", typeIds.capacity(), length);
    if (dense) {
      need(field, "offsets", offsets.capacity(), Math.multiplyExact(length, 4L));
    }
    int[] childOfTypeId = childOfTypeId(field);
    List<Field> children = field.getChildren();
    long[] childLengths = new long[children.size()];
    for (int c = 0; c < children.size(); c++) {
      Field child = children.get(c);
      if (cursor.node < cursor.nodes.size()) {
        childLengths[c] = cursor.nodes.get(cursor.node).getLength();
        if (!dense && childLengths[c] < length) {
          throw new IpcFormatException(
              String.format(
                  "column %s has %d values where its parent sparse union %s needs %d",
                  child.getName(), childLengths[c], field.getName(), length));
        }
      }
      checkField(child, cursor);
    }
    // Per child, the offset of the last value that selected it: -1 before the first.
    long[] lastOffsets = new long[children.size()];
    Arrays.fill(lastOffsets, -1);
    for (long i = 0; i < length; i++) {
      byte typeId = typeIds.getByte(i);
      int child = typeId < 0 ? -1 : childOfTypeId[typeId];
      if (child < 0) {
        throw new IpcFormatException(
            String.format(
                "column %s: row %d has type id %d, which the union does not declare (%s)",
                field.getName(), i, typeId, Arrays.toString(declaredTypeIds(field))));
      }
      if (dense) {
        long offset = offsets.getInt(i * 4);
        if (offset < 0 || offset >= childLengths[child] || offset < lastOffsets[child]) {
          throw new IpcFormatException(
              String.format(
                  "column %s: row %d has offset %d into child %s of %d values%s",
                  field.getName(),
                  i,
                  offset,
                  children.get(child).getName(),
                  childLengths[child],
                  offset < lastOffsets[child]
                      ? ", below the " + lastOffsets[child] + " before it"
                      : ""));
        }
        lastOffsets[child] = offset;
      }
    }
  }

  /** The bytes of one view of a Utf8View or BinaryView column. */
  static final int VIEW_BYTES = 16;

  /** The longest value a view holds inline, with no data buffer. */
  static final int INLINE_VIEW_BYTES = 12;

  /** Whether {@code field} is a Utf8View or BinaryView (by name: Arrow 11 has neither). */
  static boolean isStringView(Field field) {
    String typeId = field.getType().getTypeID().name();
    return typeId.equals("Utf8View") || typeId.equals("BinaryView");
  }

  /**
   * A Utf8View or BinaryView column: its validity bitmap, 16 bytes of view a value, then as many
   * data buffers as the batch's next variadic buffer count says. Every non-null view's length is 0
   * or more; one of up to 12 bytes is inline; a longer one names a data buffer of this column and
   * an offset from which its bytes lie inside that buffer.
   */
  private static void checkViews(Field field, long length, long nulls, Cursor cursor)
      throws IpcFormatException {
    ArrowBuf validity = nextBuffer(field, cursor);
    checkValidity(field, validity, length, nulls, cursor);
    ArrowBuf views = nextBuffer(field, cursor);
    need(field, "views", views.capacity(), Math.multiplyExact(length, (long) VIEW_BYTES));
    if (cursor.variadic >= cursor.variadicCounts.size()) {
      throw new IpcFormatException(
          "the batch has no variadic buffer count for view column " + field.getName());
    }
    long count = cursor.variadicCounts.get(cursor.variadic++);
    if (count > cursor.buffers.size() - cursor.buffer) {
      throw new IpcFormatException(
          String.format(
              "column %s: its %d variadic data buffers are more than the batch has left",
              field.getName(), count));
    }
    List<ArrowBuf> data = cursor.buffers.subList(cursor.buffer, cursor.buffer + (int) count);
    cursor.buffer += (int) count;
    for (long i = 0; i < length; i++) {
      if (isNull(validity, i, length, nulls)) {
        continue;
      }
      long at = i * VIEW_BYTES;
      int valueLength = views.getInt(at);
      if (valueLength < 0) {
        throw new IpcFormatException(
            String.format(
                "column %s: row %d's view has length %d", field.getName(), i, valueLength));
      }
      if (valueLength <= INLINE_VIEW_BYTES) {
        continue;
      }
      int buffer = views.getInt(at + 8);
      long offset = views.getInt(at + 12);
      if (buffer < 0 || buffer >= count) {
        throw new IpcFormatException(
            String.format(
                "column %s: row %d's view points into data buffer %d of %d",
                field.getName(), i, buffer, count));
      }
      long capacity = data.get(buffer).capacity();
      if (offset < 0 || offset + valueLength > capacity) {
        throw new IpcFormatException(
            String.format(
                "column %s: row %d's view takes bytes %d to %d of its %d-byte data buffer %d",
                field.getName(), i, offset, offset + valueLength, capacity, buffer));
      }
    }
  }

  /**
   * A ListView or LargeListView column: its validity bitmap, an offset and a size a value (4 or 8
   * bytes each), one child. Every non-null value's offset and size are 0 or more and end inside the
   * child; unlike a list's, they need not ascend.
   */
  private static void checkListView(Field field, long length, long nulls, Cursor cursor, int width)
      throws IpcFormatException {
    ArrowBuf validity = nextBuffer(field, cursor);
    checkValidity(field, validity, length, nulls, cursor);
    ArrowBuf offsets = nextBuffer(field, cursor);
    ArrowBuf sizes = nextBuffer(field, cursor);
    need(field, "offsets", offsets.capacity(), Math.multiplyExact(length, (long) width));
    need(field, "sizes", sizes.capacity(), Math.multiplyExact(length, (long) width));
    if (field.getChildren().size() != 1) {
      throw new IpcFormatException(
          "list view column "
              + field.getName()
              + " has "
              + field.getChildren().size()
              + " children");
    }
    if (cursor.node >= cursor.nodes.size()) {
      throw new IpcFormatException(
          "the batch has no field node for the elements of column " + field.getName());
    }
    long elements = cursor.nodes.get(cursor.node).getLength();
    // Null rows too: Arrow sizes the child by the largest offset plus size over every row, so a
    // null row's 2^29 would have it allocate gigabytes (a fuzz finding).
    for (long i = 0; i < length; i++) {
      long offset = width == 4 ? offsets.getInt(i * 4) : offsets.getLong(i * 8);
      long size = width == 4 ? sizes.getInt(i * 4) : sizes.getLong(i * 8);
      if (offset < 0 || size < 0 || size > elements - offset) {
        throw new IpcFormatException(
            String.format(
                "column %s: row %d has offset %d and size %d in a child of %d elements",
                field.getName(), i, offset, size, elements));
      }
    }
    checkField(field.getChildren().get(0), cursor);
  }

  /**
   * Checks a validity bitmap: as long as the values need, or absent when none or all of them are
   * null (the loader then makes one, counted against {@link #MAX_MADE_VALIDITY_BYTES}).
   */
  private static void checkValidity(
      Field field, ArrowBuf validity, long length, long nulls, Cursor cursor)
      throws IpcFormatException {
    long capacity = validity.capacity();
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
  }

  /**
   * Whether value {@code i} is null, by a bitmap {@link #checkValidity} accepted. Never where the
   * node says the column has no nulls: readers that trust the count (Quiver's Spark columns) then
   * read every value, whatever the bitmap says, so every value is checked.
   */
  private static boolean isNull(ArrowBuf validity, long i, long length, long nulls) {
    if (nulls == 0) {
      return false;
    }
    if (validity.capacity() == 0) {
      return nulls == length;
    }
    return (validity.getByte(i >> 3) & (1 << (i & 7))) == 0;
  }

  /** The type ids a union declares; absent, they are its children's positions. */
  static int[] declaredTypeIds(Field field) {
    int[] declared = ((ArrowType.Union) field.getType()).getTypeIds();
    if (declared == null) {
      declared = new int[field.getChildren().size()];
      for (int i = 0; i < declared.length; i++) {
        declared[i] = i;
      }
    }
    return declared;
  }

  /**
   * Checks a union's declaration, before Arrow makes its vector: one type id a child, each 0 to 127
   * (a type id is a signed byte in the batch), no two alike.
   */
  static void checkUnionDeclaration(Field field) throws IpcFormatException {
    int[] declared = declaredTypeIds(field);
    if (declared.length != field.getChildren().size()) {
      throw new IpcFormatException(
          String.format(
              "union column %s declares %d type ids for %d children",
              field.getName(), declared.length, field.getChildren().size()));
    }
    boolean[] seen = new boolean[Byte.MAX_VALUE + 1];
    for (int typeId : declared) {
      if (typeId < 0 || typeId > Byte.MAX_VALUE || seen[typeId]) {
        throw new IpcFormatException(
            String.format(
                "union column %s declares type ids %s: each must be 0 to 127, none repeated",
                field.getName(), Arrays.toString(declared)));
      }
      seen[typeId] = true;
    }
  }

  /** Type id (0 to 127) to the position of the child it selects; -1 where none. */
  private static int[] childOfTypeId(Field field) {
    int[] childOf = new int[Byte.MAX_VALUE + 1];
    Arrays.fill(childOf, -1);
    int[] declared = declaredTypeIds(field);
    for (int c = 0; c < declared.length; c++) {
      childOf[declared[c]] = c;
    }
    return childOf;
  }

  /**
   * A run-end encoded column: no buffers and no nulls of its own; its run ends (16, 32 or 64-bit
   * integers, no nulls) as many as its values, each above the one before from 1 up, the last the
   * column's length.
   */
  private static void checkRunEndEncoded(Field field, long length, long nulls, Cursor cursor)
      throws IpcFormatException {
    if (nulls != 0) {
      throw new IpcFormatException(
          String.format(
              "run-end encoded column %s claims %d nulls; its nulls are its values'",
              field.getName(), nulls));
    }
    checkRunEndDeclaration(field);
    Field runEndsField = field.getChildren().get(0);
    Field valuesField = field.getChildren().get(1);
    if (cursor.node + 1 >= cursor.nodes.size()) {
      throw new IpcFormatException(
          "the batch has no field nodes for the run ends and values of column "
              + field.getName()
              + " (fewer than its schema)");
    }
    ArrowFieldNode runEndsNode = cursor.nodes.get(cursor.node);
    long runs = runEndsNode.getLength();
    if (runEndsNode.getNullCount() != 0) {
      throw new IpcFormatException(
          String.format(
              "column %s: its run ends have %d nulls",
              field.getName(), runEndsNode.getNullCount()));
    }
    // The run ends' data buffer follows their validity bitmap.
    int runEndsData = cursor.buffer + 1;
    checkField(runEndsField, cursor);
    long values = cursor.nodes.get(cursor.node).getLength();
    if (values != runs) {
      throw new IpcFormatException(
          String.format("column %s has %d run ends and %d values", field.getName(), runs, values));
    }
    checkField(valuesField, cursor);
    if (runs == 0 && length > 0) {
      throw new IpcFormatException(
          String.format("column %s has %d values and no runs", field.getName(), length));
    }
    ArrowBuf runEnds = cursor.buffers.get(runEndsData);
    int width = ((ArrowType.Int) runEndsField.getType()).getBitWidth() / 8;
    long previous = 0;
    for (long i = 0; i < runs; i++) {
      long end =
          width == 2
              ? runEnds.getShort(i * 2)
              : width == 4 ? runEnds.getInt(i * 4) : runEnds.getLong(i * 8);
      if (end <= previous) {
        throw new IpcFormatException(
            String.format(
                "column %s: run end %d is %d, not above %d",
                field.getName(), i, end, i == 0 ? 0 : previous));
      }
      previous = end;
    }
    if (runs > 0 && previous != length) {
      // The format allows a last run end past the length (a slice of a longer column); Arrow
      // Java's vector validation does not, and a batch in IPC is never a slice.
      throw new IpcFormatException(
          String.format(
              "column %s: its last run ends at %d, %s its %d values end",
              field.getName(), previous, previous < length ? "before" : "past where", length));
    }
  }

  /**
   * Checks a run-end encoded field's declaration: two children, the run ends a signed 16, 32 or
   * 64-bit integer, not dictionary-encoded.
   */
  static void checkRunEndDeclaration(Field field) throws IpcFormatException {
    List<Field> children = field.getChildren();
    boolean valid = children.size() == 2 && children.get(0).getDictionary() == null;
    if (valid) {
      ArrowType runEnds = children.get(0).getType();
      int bits = runEnds instanceof ArrowType.Int ? ((ArrowType.Int) runEnds).getBitWidth() : 0;
      valid = (bits == 16 || bits == 32 || bits == 64) && ((ArrowType.Int) runEnds).getIsSigned();
    }
    if (!valid) {
      throw new IpcFormatException(
          "run-end encoded column "
              + field.getName()
              + " must have two children, its run ends a signed 16, 32 or 64-bit integer: "
              + children);
    }
  }

  /**
   * Refuses a struct or union with two children of one name. Arrow Java's struct and union vectors
   * keep children by name and replace the first with the second, so the vector has fewer children
   * than the schema: the loader then hands the following columns each other's nodes and buffers,
   * which {@link #checkLayout} checked for other columns, and Arrow grows (and on failure leaks) a
   * buffer.
   */
  static void checkChildNames(Field field) throws IpcFormatException {
    Set<String> names = new HashSet<>();
    for (Field child : field.getChildren()) {
      if (!names.add(child.getName())) {
        throw new IpcFormatException(
            String.format(
                "column %s has two children named %s, which Arrow's %s vector cannot hold"
                    + " (it keeps one)",
                field.getName(), child.getName(), field.getType().getTypeID()));
      }
    }
  }

  private static ArrowBuf nextBuffer(Field field, Cursor cursor) throws IpcFormatException {
    if (cursor.buffer >= cursor.buffers.size()) {
      throw new IpcFormatException(
          "the batch has too few buffers for column "
              + field.getName()
              + " (fewer than its schema)");
    }
    return cursor.buffers.get(cursor.buffer++);
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
}
