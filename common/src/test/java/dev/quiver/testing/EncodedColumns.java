package dev.quiver.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Columns of the types no Spark type maps to, for the tests and seeds of their decoding: sparse and
 * dense unions (every Arrow line) and run-end encoding (Arrow 14 on; its class is found by name so
 * that this compiles on Arrow 11).
 */
public final class EncodedColumns {

  private EncodedColumns() {}

  /** Type ids a C++ writer might choose: neither the children's positions nor Arrow Java's. */
  public static final int SPARSE_INT = 5;

  public static final int SPARSE_STRING = 9;
  public static final int DENSE_INT = 3;
  public static final int DENSE_STRING = 7;

  /** A sparse union "u" of an int "i" and a string "s". */
  public static final Field SPARSE = intOrString("u", UnionMode.Sparse, SPARSE_INT, SPARSE_STRING);

  /** A dense union "d" of an int "i" and a string "s". */
  public static final Field DENSE = intOrString("d", UnionMode.Dense, DENSE_INT, DENSE_STRING);

  /** A union {@code name} of an int "i" and a string "s", with type ids of the caller's choice. */
  private static Field intOrString(String name, UnionMode mode, int intId, int stringId) {
    return new Field(
        name,
        FieldType.nullable(new ArrowType.Union(mode, new int[] {intId, stringId})),
        List.of(
            Field.nullable("i", new ArrowType.Int(32, true)),
            Field.nullable("s", ArrowType.Utf8.INSTANCE)));
  }

  /** Whether this Arrow Java has run-end encoding (14 on). */
  public static boolean runEndEncodingKnown() {
    return runEndEncodedType() != null;
  }

  /** Arrow's {@code RunEndEncoded} type, found by name: null on Arrow 11 and 12. */
  public static ArrowType runEndEncodedType() {
    try {
      return (ArrowType)
          Class.forName("org.apache.arrow.vector.types.pojo.ArrowType$RunEndEncoded")
              .getField("INSTANCE")
              .get(null);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  /** A run-end encoded column "r" of strings, its run ends of {@code runEnds}. */
  public static Field runEndEncoded(ArrowType runEnds) {
    return new Field(
        "r",
        FieldType.notNullable(runEndEncodedType()),
        List.of(
            Field.notNullable("run_ends", runEnds),
            Field.nullable("values", ArrowType.Utf8.INSTANCE)));
  }

  /**
   * Fills the run-end encoded {@code vector} (its class unknown to Arrow 11) through its children:
   * {@code length} values in runs ending at {@code runEnds}, of {@code values} (null: a null run).
   */
  public static void fillRuns(FieldVector vector, int length, int[] runEnds, String... values) {
    BaseFixedWidthVector ends = (BaseFixedWidthVector) vector.getChildrenFromFields().get(0);
    VarCharVector strings = (VarCharVector) vector.getChildrenFromFields().get(1);
    ends.allocateNew(runEnds.length);
    strings.allocateNew();
    for (int i = 0; i < runEnds.length; i++) {
      if (ends instanceof SmallIntVector) {
        ((SmallIntVector) ends).set(i, runEnds[i]);
      } else if (ends instanceof IntVector) {
        ((IntVector) ends).set(i, runEnds[i]);
      } else {
        ((BigIntVector) ends).set(i, runEnds[i]);
      }
      if (values[i] == null) {
        strings.setNull(i);
      } else {
        strings.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
      }
    }
    ends.setValueCount(runEnds.length);
    strings.setValueCount(runEnds.length);
    vector.setValueCount(length);
  }

  /**
   * Four rows of whichever of {@link #SPARSE} and {@link #DENSE} {@code root} has: the sparse union
   * holds 42, "x", a null int, a null string; the dense one 7, "yy", 8, a null string.
   */
  public static void fillUnions(VectorSchemaRoot root) {
    if (hasField(root, "u")) {
      UnionVector sparse = (UnionVector) root.getVector("u");
      sparse.allocateNew();
      IntVector ints = (IntVector) sparse.getChildrenFromFields().get(0);
      VarCharVector strings = (VarCharVector) sparse.getChildrenFromFields().get(1);
      ints.allocateNew(4);
      strings.allocateNew();
      byte[] typeIds = {SPARSE_INT, SPARSE_STRING, SPARSE_INT, SPARSE_STRING};
      for (int i = 0; i < 4; i++) {
        sparse.getTypeBuffer().setByte(i, typeIds[i]);
        ints.setNull(i);
        strings.setNull(i);
      }
      ints.set(0, 42);
      strings.setSafe(1, "x".getBytes(StandardCharsets.UTF_8));
      sparse.setValueCount(4);
    }
    if (hasField(root, "d")) {
      DenseUnionVector dense = (DenseUnionVector) root.getVector("d");
      dense.allocateNew();
      IntVector ints = (IntVector) dense.getChildrenFromFields().get(0);
      VarCharVector strings = (VarCharVector) dense.getChildrenFromFields().get(1);
      ints.allocateNew(2);
      strings.allocateNew();
      byte[] typeIds = {DENSE_INT, DENSE_STRING, DENSE_INT, DENSE_STRING};
      int[] offsets = {0, 0, 1, 1};
      for (int i = 0; i < 4; i++) {
        dense.getTypeBuffer().setByte(i, typeIds[i]);
        dense.getOffsetBuffer().setInt(i * 4L, offsets[i]);
      }
      ints.set(0, 7);
      ints.set(1, 8);
      strings.setSafe(0, "yy".getBytes(StandardCharsets.UTF_8));
      strings.setNull(1);
      ints.setValueCount(2);
      strings.setValueCount(2);
      dense.setValueCount(4);
    }
    root.setRowCount(4);
  }

  /**
   * Four rows of a sparse union, a dense union and, where this Arrow knows it, a run-end encoded
   * column of 32-bit run ends ("a", "a", null, "ccc").
   */
  public static VectorSchemaRoot unionsAndRuns(BufferAllocator allocator) {
    boolean runs = runEndEncodingKnown();
    List<Field> fields =
        runs
            ? List.of(SPARSE, DENSE, runEndEncoded(new ArrowType.Int(32, true)))
            : List.of(SPARSE, DENSE);
    VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(fields), allocator);
    fillUnions(root);
    if (runs) {
      fillRuns(root.getVector("r"), 4, new int[] {2, 3, 4}, "a", null, "ccc");
    }
    return root;
  }

  /** Arrow's type {@code name} (a class nested in {@code ArrowType}), or null where it has none. */
  public static ArrowType arrowType(String name) {
    try {
      return (ArrowType)
          Class.forName("org.apache.arrow.vector.types.pojo.ArrowType$" + name)
              .getField("INSTANCE")
              .get(null);
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  /** Whether this Arrow Java has the view types (Utf8View, BinaryView, ListView: 18 on here). */
  public static boolean viewTypesKnown() {
    return arrowType("Utf8View") != null && arrowType("ListView") != null;
  }

  /** Strings of every shape a view holds: inline (up to 12 bytes), out of line, empty, null. */
  private static final String[] VIEW_STRINGS = {
    "short", null, "a string longer than twelve bytes", "", "exactly12byt", "thirteen byte"
  };

  /**
   * A root of a Utf8View "v", a BinaryView "b" (the UTF-8 bytes of the same values) of {@link
   * #VIEW_STRINGS}, and a ListView "l" and a LargeListView "ll" of ints, over the elements 1, 2, 3,
   * 4: [2, 3], null, [1], [3, 4], [] and [1, 2, 3, 4] (the views overlap and do not ascend).
   */
  public static VectorSchemaRoot views(BufferAllocator allocator) {
    Field element = Field.nullable("e", new ArrowType.Int(32, true));
    Schema schema =
        new Schema(
            List.of(
                Field.nullable("v", arrowType("Utf8View")),
                Field.nullable("b", arrowType("BinaryView")),
                new Field("l", FieldType.nullable(arrowType("ListView")), List.of(element)),
                new Field("ll", FieldType.nullable(arrowType("LargeListView")), List.of(element))));
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    int rows = VIEW_STRINGS.length;
    for (String name : new String[] {"v", "b"}) {
      FieldVector vector = root.getVector(name);
      vector.allocateNew();
      for (int i = 0; i < rows; i++) {
        if (VIEW_STRINGS[i] != null) {
          setBytes(vector, i, VIEW_STRINGS[i].getBytes(StandardCharsets.UTF_8));
        }
      }
      vector.setValueCount(rows);
    }
    long[][] lists = {{1, 2}, {0, 0}, {0, 1}, {2, 2}, {3, 0}, {0, 4}};
    for (String name : new String[] {"l", "ll"}) {
      FieldVector vector = root.getVector(name);
      int width = name.equals("l") ? 4 : 8;
      vector.allocateNew();
      IntVector elements = (IntVector) vector.getChildrenFromFields().get(0);
      elements.allocateNew(4);
      for (int e = 0; e < 4; e++) {
        elements.set(e, e + 1);
      }
      elements.setValueCount(4);
      for (int i = 0; i < rows; i++) {
        setListView(vector, width, i, lists[i][0], lists[i][1]);
        if (i != 1) {
          org.apache.arrow.vector.BitVectorHelper.setBit(vector.getValidityBuffer(), i);
        }
      }
      vector.setValueCount(rows);
    }
    root.setRowCount(rows);
    return root;
  }

  /** Sets value {@code i} of a ListView (width 4) or LargeListView (8) through its buffers. */
  public static void setListView(FieldVector vector, int width, int i, long offset, long size) {
    org.apache.arrow.memory.ArrowBuf offsets = vector.getFieldBuffers().get(1);
    org.apache.arrow.memory.ArrowBuf sizes = vector.getFieldBuffers().get(2);
    if (width == 4) {
      offsets.setInt(i * 4L, (int) offset);
      sizes.setInt(i * 4L, (int) size);
    } else {
      offsets.setLong(i * 8L, offset);
      sizes.setLong(i * 8L, size);
    }
  }

  /** {@code setSafe(i, bytes)} of a view vector, whose class Arrow 11 does not have. */
  public static void setBytes(FieldVector vector, int i, byte[] bytes) {
    try {
      vector.getClass().getMethod("setSafe", int.class, byte[].class).invoke(vector, i, bytes);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean hasField(VectorSchemaRoot root, String name) {
    return root.getSchema().getFields().stream().anyMatch(f -> f.getName().equals(name));
  }
}
