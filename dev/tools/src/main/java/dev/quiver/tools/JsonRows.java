package dev.quiver.tools;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Writes Arrow rows as JSON objects, one a line, the way Spark's JSON writer shows the same values
 * where it can: binary as base64, decimals as numbers, dates as {@code yyyy-MM-dd}, timestamps with
 * a time zone as ISO-8601 in UTC ({@code Z}) at the unit's precision (timestamps without one as
 * local date-times), structs as objects, lists as arrays, maps with string keys as objects (other
 * keys are written as their JSON text). Unlike Spark, a null is written as {@code null}, not left
 * out.
 *
 * <p>Nested values are walked by position (offsets, child vectors); leaves are read with {@code
 * getObject}. A field is keyed by its name, or by {@code _<position>} where the name is empty or
 * repeats an earlier sibling's (Comet writes empty names).
 */
final class JsonRows {

  /** Timestamp formats with 0, 3, 6 and 9 fraction digits: seconds to nanoseconds. */
  private static final DateTimeFormatter[] FRACTIONS = {
    fraction(0), fraction(3), fraction(6), fraction(9)
  };

  private final List<String> topNames;

  /**
   * @param names keys for the top-level columns, in order; null or shorter than the schema to key
   *     the rest as {@link JsonRows} describes
   */
  JsonRows(List<String> names) {
    this.topNames = names == null ? new ArrayList<>() : new ArrayList<>(names);
  }

  /** One row of {@code columns} as a JSON object, without a line end. */
  String row(List<? extends ValueVector> columns, List<Field> fields, int row) {
    StringBuilder out = new StringBuilder();
    List<String> keys = keys(fields, topNames);
    out.append('{');
    for (int c = 0; c < columns.size(); c++) {
      if (c > 0) {
        out.append(',');
      }
      string(keys.get(c), out);
      out.append(':');
      value(columns.get(c), fields.get(c), row, out);
    }
    return out.append('}').toString();
  }

  /**
   * The keys of {@code fields}: {@code given} first, then names, {@code _<position>} if unusable.
   */
  static List<String> keys(List<Field> fields, List<String> given) {
    List<String> keys = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < fields.size(); i++) {
      String key = i < given.size() ? given.get(i) : fields.get(i).getName();
      if (key == null || key.isEmpty() || !seen.add(key)) {
        key = "_" + i;
        seen.add(key);
      }
      keys.add(key);
    }
    return keys;
  }

  private static void value(ValueVector vector, Field field, int index, StringBuilder out) {
    if (vector.isNull(index)) {
      out.append("null");
      return;
    }
    ArrowType type = field.getType();
    switch (type.getTypeID()) {
      case Null:
        out.append("null");
        return;
      case Bool:
      case Decimal:
      case FloatingPoint:
        number(vector.getObject(index), out);
        return;
      case Int:
        integer((BaseIntVector) vector, (ArrowType.Int) type, index, out);
        return;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        string(Base64.getEncoder().encodeToString((byte[]) vector.getObject(index)), out);
        return;
      case Date:
        Object date = vector.getObject(index);
        if (date instanceof Integer) {
          string(LocalDate.ofEpochDay((Integer) date).toString(), out);
        } else if (date instanceof LocalDateTime) {
          string(((LocalDateTime) date).toLocalDate().toString(), out);
        } else {
          string(String.valueOf(date), out);
        }
        return;
      case Timestamp:
        timestamp((TimeStampVector) vector, (ArrowType.Timestamp) type, index, out);
        return;
      case Struct:
        struct((StructVector) vector, field, index, out);
        return;
      case List:
      case LargeList:
      case FixedSizeList:
        list(vector, field, index, out);
        return;
      case Map:
        map((ListVector) vector, field, index, out);
        return;
      default:
        // Strings (their getObject is Arrow's Text), times, intervals, durations, unions: as text.
        Object other = vector.getObject(index);
        if (other instanceof byte[]) {
          string(Base64.getEncoder().encodeToString((byte[]) other), out);
        } else {
          string(String.valueOf(other), out);
        }
    }
  }

  /** An integer; unsigned ones as their unsigned value (getObject gives some as signed or char). */
  private static void integer(
      BaseIntVector vector, ArrowType.Int type, int index, StringBuilder out) {
    long value = vector.getValueAsLong(index);
    if (type.getIsSigned()) {
      out.append(value);
    } else if (type.getBitWidth() == 64) {
      out.append(Long.toUnsignedString(value));
    } else {
      out.append(value & ((1L << type.getBitWidth()) - 1));
    }
  }

  private static void number(Object value, StringBuilder out) {
    if (value instanceof BigDecimal) {
      out.append(((BigDecimal) value).toPlainString());
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        // JSON has no NaN or infinities; Spark writes them as strings too.
        string(value.toString(), out);
      } else {
        out.append(value);
      }
    } else {
      out.append(value);
    }
  }

  private static void timestamp(
      TimeStampVector vector, ArrowType.Timestamp type, int index, StringBuilder out) {
    long value = vector.get(index);
    long seconds;
    long nanos;
    int precision;
    TimeUnit unit = type.getUnit();
    switch (unit) {
      case SECOND:
        seconds = value;
        nanos = 0;
        precision = 0;
        break;
      case MILLISECOND:
        seconds = Math.floorDiv(value, 1_000L);
        nanos = Math.floorMod(value, 1_000L) * 1_000_000L;
        precision = 1;
        break;
      case MICROSECOND:
        seconds = Math.floorDiv(value, 1_000_000L);
        nanos = Math.floorMod(value, 1_000_000L) * 1_000L;
        precision = 2;
        break;
      default:
        seconds = Math.floorDiv(value, 1_000_000_000L);
        nanos = Math.floorMod(value, 1_000_000_000L);
        precision = 3;
    }
    LocalDateTime utc = LocalDateTime.ofEpochSecond(seconds, (int) nanos, ZoneOffset.UTC);
    String text = FRACTIONS[precision].format(utc);
    // With a time zone the value is an instant: show it in UTC. Without, it is a wall-clock time.
    string(type.getTimezone() == null ? text : text + "Z", out);
  }

  private static void struct(StructVector vector, Field field, int index, StringBuilder out) {
    List<Field> children = field.getChildren();
    List<String> keys = keys(children, new ArrayList<>());
    out.append('{');
    for (int c = 0; c < children.size(); c++) {
      if (c > 0) {
        out.append(',');
      }
      string(keys.get(c), out);
      out.append(':');
      value(vector.getChildByOrdinal(c), children.get(c), index, out);
    }
    out.append('}');
  }

  private static void list(ValueVector vector, Field field, int index, StringBuilder out) {
    long start;
    long end;
    FieldVector elements;
    if (vector instanceof LargeListVector) {
      LargeListVector list = (LargeListVector) vector;
      start = list.getOffsetBuffer().getLong((long) index * 8);
      end = list.getOffsetBuffer().getLong((long) (index + 1) * 8);
      elements = list.getDataVector();
    } else if (vector instanceof FixedSizeListVector) {
      FixedSizeListVector list = (FixedSizeListVector) vector;
      start = (long) index * list.getListSize();
      end = start + list.getListSize();
      elements = list.getDataVector();
    } else {
      ListVector list = (ListVector) vector;
      start = list.getOffsetBuffer().getInt((long) index * 4);
      end = list.getOffsetBuffer().getInt((long) (index + 1) * 4);
      elements = list.getDataVector();
    }
    Field elementField = field.getChildren().get(0);
    out.append('[');
    for (long i = start; i < end; i++) {
      if (i > start) {
        out.append(',');
      }
      value(elements, elementField, (int) i, out);
    }
    out.append(']');
  }

  private static void map(ListVector vector, Field field, int index, StringBuilder out) {
    int start = vector.getOffsetBuffer().getInt((long) index * 4);
    int end = vector.getOffsetBuffer().getInt((long) (index + 1) * 4);
    StructVector entries = (StructVector) vector.getDataVector();
    Field entryField = field.getChildren().get(0);
    Field keyField = entryField.getChildren().get(0);
    Field valueField = entryField.getChildren().get(1);
    ValueVector keys = entries.getChildByOrdinal(0);
    ValueVector values = entries.getChildByOrdinal(1);
    boolean textKeys = isText(keyField.getType());
    out.append('{');
    for (int i = start; i < end; i++) {
      if (i > start) {
        out.append(',');
      }
      if (textKeys) {
        value(keys, keyField, i, out);
      } else {
        StringBuilder key = new StringBuilder();
        value(keys, keyField, i, key);
        string(key.toString(), out);
      }
      out.append(':');
      value(values, valueField, i, out);
    }
    out.append('}');
  }

  private static boolean isText(ArrowType type) {
    String id = type.getTypeID().name();
    return id.equals("Utf8") || id.equals("LargeUtf8") || id.equals("Utf8View");
  }

  /** {@code text} as a JSON string. */
  static void string(String text, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  private static DateTimeFormatter fraction(int digits) {
    DateTimeFormatterBuilder builder =
        new DateTimeFormatterBuilder().appendPattern("uuuu-MM-dd'T'HH:mm:ss");
    if (digits > 0) {
      builder.appendFraction(ChronoField.NANO_OF_SECOND, digits, digits, true);
    }
    return builder.toFormatter();
  }
}
