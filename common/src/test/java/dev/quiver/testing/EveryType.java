package dev.quiver.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A column of every type Quiver reads, every width and unit (integers signed and unsigned of 8 to
 * 64 bits, floats, decimals of 128 and 256 bits, dates, times, timestamps, durations, the three
 * intervals, strings and binaries and their large and fixed-size variants, lists, large lists,
 * fixed-size lists, structs, maps, nulls), with nulls at every level: for the tests of byte order,
 * where every width of value must be seen.
 */
public final class EveryType {

  private EveryType() {}

  /** The schema: one column per type, nested columns holding several of them. */
  public static Schema schema() {
    List<Field> fields = new ArrayList<>();
    for (int bits : new int[] {8, 16, 32, 64}) {
      fields.add(nullable("i" + bits, new ArrowType.Int(bits, true)));
      fields.add(nullable("u" + bits, new ArrowType.Int(bits, false)));
    }
    fields.add(nullable("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)));
    fields.add(nullable("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)));
    fields.add(nullable("dec128", new ArrowType.Decimal(38, 6, 128)));
    fields.add(nullable("dec256", new ArrowType.Decimal(76, 10, 256)));
    fields.add(nullable("date_day", new ArrowType.Date(DateUnit.DAY)));
    fields.add(nullable("date_ms", new ArrowType.Date(DateUnit.MILLISECOND)));
    fields.add(nullable("time_s", new ArrowType.Time(TimeUnit.SECOND, 32)));
    fields.add(nullable("time_ms", new ArrowType.Time(TimeUnit.MILLISECOND, 32)));
    fields.add(nullable("time_us", new ArrowType.Time(TimeUnit.MICROSECOND, 64)));
    fields.add(nullable("time_ns", new ArrowType.Time(TimeUnit.NANOSECOND, 64)));
    for (TimeUnit unit : TimeUnit.values()) {
      fields.add(nullable("ts_" + unit, new ArrowType.Timestamp(unit, null)));
      fields.add(nullable("tstz_" + unit, new ArrowType.Timestamp(unit, "UTC")));
      fields.add(nullable("dur_" + unit, new ArrowType.Duration(unit)));
    }
    fields.add(nullable("iv_ym", new ArrowType.Interval(IntervalUnit.YEAR_MONTH)));
    fields.add(nullable("iv_dt", new ArrowType.Interval(IntervalUnit.DAY_TIME)));
    fields.add(nullable("iv_mdn", new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO)));
    fields.add(nullable("b", ArrowType.Bool.INSTANCE));
    fields.add(nullable("s", ArrowType.Utf8.INSTANCE));
    fields.add(nullable("bin", ArrowType.Binary.INSTANCE));
    fields.add(nullable("ls", ArrowType.LargeUtf8.INSTANCE));
    fields.add(nullable("lbin", ArrowType.LargeBinary.INSTANCE));
    fields.add(nullable("fsb", new ArrowType.FixedSizeBinary(5)));
    fields.add(nullable("n", ArrowType.Null.INSTANCE));
    fields.add(
        parent("list", ArrowType.List.INSTANCE, nullable("item", new ArrowType.Int(64, true))));
    fields.add(
        parent(
            "large_list", ArrowType.LargeList.INSTANCE, nullable("item", ArrowType.Utf8.INSTANCE)));
    fields.add(
        parent(
            "fixed_list",
            new ArrowType.FixedSizeList(3),
            nullable("item", new ArrowType.Int(16, true))));
    fields.add(
        parent(
            "struct",
            ArrowType.Struct.INSTANCE,
            nullable("x", new ArrowType.Int(32, true)),
            nullable("d", new ArrowType.Decimal(20, 3, 128)),
            nullable("iv", new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO)),
            parent("inner", ArrowType.List.INSTANCE, nullable("item", ArrowType.Utf8.INSTANCE))));
    fields.add(
        TestData.mapField(
            "map",
            TestData.stringKey(),
            nullable("value", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))));
    return new Schema(fields);
  }

  /** A root of {@link #schema()} of {@code rows} rows drawn from {@code seed}; the caller's. */
  public static VectorSchemaRoot root(BufferAllocator allocator, int rows, long seed) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema(), allocator);
    root.allocateNew();
    Random random = new Random(seed);
    for (FieldVector vector : root.getFieldVectors()) {
      for (int r = 0; r < rows; r++) {
        fill(vector, r, random);
      }
    }
    root.setRowCount(rows);
    return root;
  }

  private static Field nullable(String name, ArrowType type) {
    return new Field(name, FieldType.nullable(type), null);
  }

  private static Field parent(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), Arrays.asList(children));
  }

  /** Sets row {@code i} of {@code v}: null one time in five where it may be, else a value. */
  private static void fill(FieldVector v, int i, Random random) {
    if (v instanceof NullVector) {
      return;
    }
    if (v instanceof BaseFixedWidthVector) {
      while (i >= v.getValueCapacity()) {
        v.reAlloc();
      }
    }
    if (v.getField().isNullable() && random.nextInt(5) == 0) {
      setNull(v, i);
      return;
    }
    long l = random.nextLong();
    if (v instanceof BaseIntVector) {
      ((BaseIntVector) v).setWithPossibleTruncate(i, l);
    } else if (v instanceof BitVector) {
      ((BitVector) v).set(i, (int) (l & 1));
    } else if (v instanceof Float4Vector) {
      ((Float4Vector) v).set(i, (float) random.nextGaussian() * 1e6f);
    } else if (v instanceof Float8Vector) {
      ((Float8Vector) v).set(i, random.nextGaussian() * 1e12);
    } else if (v instanceof DecimalVector) {
      // Negative values too: the sign's bytes are the high ones, at the other end once swapped.
      DecimalVector decimals = (DecimalVector) v;
      decimals.set(i, new BigDecimal(signed(decimals.getPrecision(), random), decimals.getScale()));
    } else if (v instanceof Decimal256Vector) {
      Decimal256Vector decimals = (Decimal256Vector) v;
      decimals.set(i, new BigDecimal(signed(decimals.getPrecision(), random), decimals.getScale()));
    } else if (v instanceof DateDayVector) {
      ((DateDayVector) v).set(i, random.nextInt(100_000) - 50_000);
    } else if (v instanceof DateMilliVector) {
      ((DateMilliVector) v).set(i, (random.nextInt(100_000) - 50_000) * 86_400_000L);
    } else if (v instanceof TimeSecVector) {
      ((TimeSecVector) v).set(i, random.nextInt(86_400));
    } else if (v instanceof TimeMilliVector) {
      ((TimeMilliVector) v).set(i, random.nextInt(86_400_000));
    } else if (v instanceof TimeMicroVector) {
      ((TimeMicroVector) v).set(i, Math.floorMod(l, 86_400_000_000L));
    } else if (v instanceof TimeNanoVector) {
      ((TimeNanoVector) v).set(i, Math.floorMod(l, 86_400_000_000_000L));
    } else if (v instanceof TimeStampVector) {
      ((TimeStampVector) v).set(i, l >> 14);
    } else if (v instanceof DurationVector) {
      ((DurationVector) v).set(i, l >> 14);
    } else if (v instanceof IntervalYearVector) {
      ((IntervalYearVector) v).set(i, (int) l);
    } else if (v instanceof IntervalDayVector) {
      ((IntervalDayVector) v).set(i, (int) l, (int) (l >> 32));
    } else if (v instanceof IntervalMonthDayNanoVector) {
      ((IntervalMonthDayNanoVector) v).set(i, (int) l, (int) (l >> 32), random.nextLong());
    } else if (v instanceof FixedSizeBinaryVector) {
      byte[] bytes = new byte[5];
      random.nextBytes(bytes);
      ((FixedSizeBinaryVector) v).set(i, bytes);
    } else if (v instanceof BaseVariableWidthVector) {
      ((BaseVariableWidthVector) v).setSafe(i, text(random));
    } else if (v instanceof BaseLargeVariableWidthVector) {
      ((BaseLargeVariableWidthVector) v).setSafe(i, text(random));
    } else if (v instanceof StructVector) {
      ((StructVector) v).setIndexDefined(i);
      for (FieldVector child : v.getChildrenFromFields()) {
        fill(child, i, random);
      }
    } else if (v instanceof ListVector) {
      // Maps too: a list of key-value structs.
      ListVector list = (ListVector) v;
      int start = list.startNewValue(i);
      int n = random.nextInt(4);
      for (int j = 0; j < n; j++) {
        fill(list.getDataVector(), start + j, random);
      }
      list.endValue(i, n);
    } else if (v instanceof LargeListVector) {
      LargeListVector list = (LargeListVector) v;
      long start = list.startNewValue(i);
      int n = random.nextInt(4);
      for (int j = 0; j < n; j++) {
        fill(list.getDataVector(), (int) start + j, random);
      }
      list.endValue(i, n);
    } else if (v instanceof FixedSizeListVector) {
      FixedSizeListVector list = (FixedSizeListVector) v;
      int start = list.startNewValue(i);
      for (int j = 0; j < list.getListSize(); j++) {
        fill(list.getDataVector(), start + j, random);
      }
    } else {
      throw new IllegalArgumentException("no values for " + v.getField());
    }
  }

  /** A random integer, as often negative as not, of fewer than {@code digits} decimal digits. */
  private static BigInteger signed(int digits, Random random) {
    int bits = (int) (digits * 3.32) - 2;
    return new BigInteger(bits, random).subtract(BigInteger.ONE.shiftLeft(bits - 1));
  }

  private static byte[] text(Random random) {
    StringBuilder s = new StringBuilder();
    int n = random.nextInt(12);
    for (int k = 0; k < n; k++) {
      s.append((char) ('a' + random.nextInt(26)));
    }
    if (random.nextInt(4) == 0) {
      s.append("é€");
    }
    return s.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void setNull(FieldVector v, int i) {
    if (v instanceof BaseFixedWidthVector) {
      ((BaseFixedWidthVector) v).setNull(i);
    } else if (v instanceof BaseVariableWidthVector) {
      ((BaseVariableWidthVector) v).setNull(i);
    } else if (v instanceof BaseLargeVariableWidthVector) {
      ((BaseLargeVariableWidthVector) v).setNull(i);
    } else if (v instanceof StructVector) {
      ((StructVector) v).setNull(i);
    } else if (v instanceof ListVector) {
      ((ListVector) v).setNull(i);
    } else if (v instanceof LargeListVector) {
      ((LargeListVector) v).setNull(i);
    } else if (v instanceof FixedSizeListVector) {
      ((FixedSizeListVector) v).setNull(i);
    } else {
      throw new IllegalArgumentException("no null for " + v.getField());
    }
  }
}
