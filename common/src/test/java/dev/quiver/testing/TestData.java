package dev.quiver.testing;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Deterministic Arrow data for tests: every type Spark maps to Arrow, with nulls; the
 * long/long/string shape of a broadcast build side; a dictionary-encoded column; no columns at all.
 */
public final class TestData {

  private TestData() {}

  /** Nulls appear in every nullable column on rows where {@code row % nullEvery == 0}. */
  public static final int NULL_EVERY = 7;

  /** The values of the dictionary of {@link #dictionarySchema}: {@code "color-0"} and on. */
  public static final int COLORS = 3;

  /** The schema of {@link #allTypes}: one column per Arrow type that Spark maps to. */
  public static Schema allTypesSchema() {
    List<Field> fields = new ArrayList<>();
    fields.add(nullable("b", ArrowType.Bool.INSTANCE));
    fields.add(nullable("i8", new ArrowType.Int(8, true)));
    fields.add(nullable("i16", new ArrowType.Int(16, true)));
    fields.add(nullable("i32", new ArrowType.Int(32, true)));
    fields.add(nullable("i64", new ArrowType.Int(64, true)));
    fields.add(nullable("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    fields.add(nullable("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)));
    fields.add(nullable("dec", new ArrowType.Decimal(10, 2, 128)));
    fields.add(nullable("date", new ArrowType.Date(DateUnit.DAY)));
    fields.add(nullable("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")));
    fields.add(nullable("ts_ntz", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)));
    fields.add(nullable("s", ArrowType.Utf8.INSTANCE));
    fields.add(nullable("bin", ArrowType.Binary.INSTANCE));
    fields.add(
        new Field(
            "st",
            FieldType.nullable(ArrowType.Struct.INSTANCE),
            Arrays.asList(
                nullable("x", new ArrowType.Int(32, true)),
                nullable("y", ArrowType.Utf8.INSTANCE))));
    fields.add(
        new Field(
            "arr",
            FieldType.nullable(ArrowType.List.INSTANCE),
            Arrays.asList(nullable("element", new ArrowType.Int(32, true)))));
    fields.add(mapField("m", stringKey(), nullable("value", new ArrowType.Int(32, true))));
    fields.add(new Field("n", FieldType.nullable(ArrowType.Null.INSTANCE), null));
    return new Schema(fields);
  }

  /**
   * A nullable map column {@code name} (keys not sorted): its entries a non-null struct of {@code
   * key} and {@code value}, as Arrow lays a map out.
   */
  public static Field mapField(String name, Field key, Field value) {
    Field entries =
        new Field(
            "entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), Arrays.asList(key, value));
    return new Field(name, FieldType.nullable(new ArrowType.Map(false)), Arrays.asList(entries));
  }

  /** A map's usual key: non-null strings named {@code key}. */
  public static Field stringKey() {
    return new Field("key", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null);
  }

  private static Field nullable(String name, ArrowType type) {
    return new Field(name, FieldType.nullable(type), null);
  }

  /**
   * A root of {@link #allTypesSchema()} holding {@code rows} rows derived from {@code seed}. Row
   * {@code r} holds the same values whatever {@code rows} is, so slices can be compared.
   */
  public static VectorSchemaRoot allTypes(BufferAllocator allocator, int rows, long seed) {
    VectorSchemaRoot root = VectorSchemaRoot.create(allTypesSchema(), allocator);
    root.allocateNew();
    for (int r = 0; r < rows; r++) {
      boolean isNull = r % NULL_EVERY == 0;
      Random random = new Random(seed * 1_000_003L + r);
      long v = random.nextLong();
      if (isNull) {
        for (FieldVector vector : root.getFieldVectors()) {
          setNull(vector, r);
        }
        continue;
      }
      ((BitVector) root.getVector("b")).setSafe(r, (int) (v & 1));
      ((TinyIntVector) root.getVector("i8")).setSafe(r, (byte) v);
      ((SmallIntVector) root.getVector("i16")).setSafe(r, (short) v);
      ((IntVector) root.getVector("i32")).setSafe(r, (int) v);
      ((BigIntVector) root.getVector("i64")).setSafe(r, v);
      ((Float4Vector) root.getVector("f32")).setSafe(r, random.nextFloat());
      ((Float8Vector) root.getVector("f64")).setSafe(r, random.nextDouble());
      ((DecimalVector) root.getVector("dec"))
          .setSafe(r, BigDecimal.valueOf(Math.floorMod(v, 10_000_000_000L) - 5_000_000_000L, 2));
      ((DateDayVector) root.getVector("date")).setSafe(r, (int) Math.floorMod(v, 40_000L));
      ((TimeStampMicroTZVector) root.getVector("ts")).setSafe(r, v >> 12);
      ((TimeStampMicroVector) root.getVector("ts_ntz")).setSafe(r, v >> 13);
      String s = "row-" + r + "-" + String.format("%016x", v).substring(0, 1 + (r % 15));
      ((VarCharVector) root.getVector("s")).setSafe(r, s.getBytes(StandardCharsets.UTF_8));
      byte[] bin = new byte[r % 9];
      random.nextBytes(bin);
      ((VarBinaryVector) root.getVector("bin")).setSafe(r, bin);
      StructVector st = (StructVector) root.getVector("st");
      st.setIndexDefined(r);
      ((IntVector) st.getChild("x")).setSafe(r, r);
      ((VarCharVector) st.getChild("y")).setSafe(r, ("y" + r).getBytes(StandardCharsets.UTF_8));
      writeList((ListVector) root.getVector("arr"), r, random);
      writeMap((MapVector) root.getVector("m"), r);
    }
    // Struct children must have their value count set for nulls at the struct level too.
    root.setRowCount(rows);
    return root;
  }

  private static void setNull(FieldVector vector, int r) {
    if (vector instanceof NullVector) {
      return;
    }
    if (vector instanceof StructVector) {
      ((StructVector) vector).setNull(r);
      for (FieldVector child : ((StructVector) vector).getChildrenFromFields()) {
        setNull(child, r);
      }
      return;
    }
    if (vector instanceof ListVector) {
      ListVector list = (ListVector) vector;
      UnionListWriter writer = list.getWriter();
      writer.setPosition(r);
      writer.writeNull();
      return;
    }
    if (vector instanceof org.apache.arrow.vector.BaseFixedWidthVector) {
      ((org.apache.arrow.vector.BaseFixedWidthVector) vector).setNull(r);
    } else if (vector instanceof org.apache.arrow.vector.BaseVariableWidthVector) {
      ((org.apache.arrow.vector.BaseVariableWidthVector) vector).setNull(r);
    }
  }

  private static void writeList(ListVector list, int r, Random random) {
    UnionListWriter writer = list.getWriter();
    writer.setPosition(r);
    writer.startList();
    int n = r % 4;
    for (int i = 0; i < n; i++) {
      if (i == 2) {
        writer.writeNull();
      } else {
        writer.writeInt(random.nextInt(1000));
      }
    }
    writer.endList();
  }

  private static void writeMap(MapVector map, int r) {
    UnionMapWriter writer = map.getWriter();
    writer.setPosition(r);
    writer.startMap();
    for (int i = 0; i < r % 3; i++) {
      writer.startEntry();
      byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
      try (org.apache.arrow.memory.ArrowBuf buf = map.getAllocator().buffer(key.length)) {
        buf.setBytes(0, key);
        writer.key().varChar().writeVarChar(0, key.length, buf);
      }
      writer.value().integer().writeInt(r * 10 + i);
      writer.endEntry();
    }
    writer.endMap();
  }

  /** The broadcast build-side shape: {@code k} (unique long), {@code v} (long), {@code s}. */
  public static Schema buildSideSchema() {
    return new Schema(
        Arrays.asList(
            nullable("k", new ArrowType.Int(64, true)),
            nullable("v", new ArrowType.Int(64, true)),
            nullable("s", ArrowType.Utf8.INSTANCE)));
  }

  /** {@code rows} rows of {@link #buildSideSchema()} starting at key {@code firstKey}. */
  public static VectorSchemaRoot buildSide(BufferAllocator allocator, long firstKey, int rows) {
    return keyedRows(
        buildSideSchema(),
        allocator,
        firstKey,
        rows,
        root -> {
          BigIntVector v = (BigIntVector) root.getVector("v");
          VarCharVector s = (VarCharVector) root.getVector("s");
          return (r, key) -> {
            v.setSafe(r, key * 31 + 7);
            s.setSafe(r, ("value-" + key).getBytes(StandardCharsets.UTF_8));
          };
        });
  }

  /** Sets the columns of one row but its key, from the key. */
  public interface KeyedRow {
    void set(int row, long key);
  }

  /**
   * {@code rows} rows of {@code schema}, whose long column {@code k} holds the keys, from {@code
   * firstKey} up; {@code rest}, given the batch's root, sets each row's other columns.
   */
  public static VectorSchemaRoot keyedRows(
      Schema schema,
      BufferAllocator allocator,
      long firstKey,
      int rows,
      Function<VectorSchemaRoot, KeyedRow> rest) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    BigIntVector k = (BigIntVector) root.getVector("k");
    KeyedRow others = rest.apply(root);
    root.allocateNew();
    for (int r = 0; r < rows; r++) {
      long key = firstKey + r;
      k.setSafe(r, key);
      others.set(r, key);
    }
    root.setRowCount(rows);
    return root;
  }

  /** {@code rows} rows and no columns: only the row count travels. */
  public static VectorSchemaRoot zeroColumns(BufferAllocator allocator, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(Collections.emptyList()), allocator);
    root.setRowCount(rows);
    return root;
  }

  /**
   * {@code k} (long) and {@code d}: int32 indices into dictionary {@code id}, whose values are
   * {@link #COLORS} strings; row {@code k} is {@code "color-" + (k % COLORS)}.
   */
  public static Schema dictionarySchema(long id) {
    return new Schema(
        Arrays.asList(
            nullable("k", new ArrowType.Int(64, true)),
            new Field(
                "d", new FieldType(true, new ArrowType.Int(32, true), colorEncoding(id)), null)));
  }

  /** The dictionary {@link #dictionarySchema}'s {@code d} refers to; its vector is the caller's. */
  public static Dictionary colorDictionary(BufferAllocator allocator, long id) {
    VarCharVector colors = new VarCharVector("colors", allocator);
    colors.allocateNew();
    for (int i = 0; i < COLORS; i++) {
      colors.setSafe(i, ("color-" + i).getBytes(StandardCharsets.UTF_8));
    }
    colors.setValueCount(COLORS);
    return new Dictionary(colors, colorEncoding(id));
  }

  /** {@code rows} rows of {@link #dictionarySchema} from key {@code firstKey}. */
  public static VectorSchemaRoot dictionaryIndices(
      BufferAllocator allocator, long id, long firstKey, int rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(dictionarySchema(id), allocator);
    root.allocateNew();
    BigIntVector k = (BigIntVector) root.getVector("k");
    IntVector d = (IntVector) root.getVector("d");
    for (int r = 0; r < rows; r++) {
      long key = firstKey + r;
      k.setSafe(r, key);
      d.setSafe(r, (int) (key % COLORS));
    }
    root.setRowCount(rows);
    return root;
  }

  private static DictionaryEncoding colorEncoding(long id) {
    return new DictionaryEncoding(id, false, new ArrowType.Int(32, true));
  }
}
