package dev.quiver.tools;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
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
 * Writes Arrow rows as JSON objects, one a line, through Jackson's streaming generator, the way
 * Spark's JSON writer shows the same values where it can: binary as base64, decimals as numbers
 * with the column's scale, dates as {@code yyyy-MM-dd}, timestamps with a time zone as ISO-8601 in
 * UTC ({@code Z}) at the unit's precision (timestamps without one as local date-times; one past the
 * years {@code java.time} shows as its count, {@code "649641590271792000 seconds from the epoch"}),
 * structs as objects, lists as arrays, maps with string keys as objects (other keys, and a null
 * key, are written as their JSON text). Unlike Spark, a null is written as {@code null}, not left
 * out.
 *
 * <p>Nested values are walked by position (offsets, child vectors); leaves are read with {@code
 * getObject}. A field is keyed by its name, or by {@code _<position>} where the name is empty or
 * repeats an earlier sibling's (Comet writes empty names).
 */
final class JsonRows {

  /**
   * Decimals as plain numbers (never {@code 1E+3}: the scale shows as it is stored), except past
   * {@link #PLAIN_SCALE_LIMIT}; NaN and the infinities, which JSON has no numbers for, as strings,
   * as Spark writes them.
   */
  private static final JsonFactory JSON =
      new JsonFactoryBuilder()
          .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
          .enable(JsonWriteFeature.WRITE_NAN_AS_STRINGS)
          .build();

  /**
   * The largest scale (either sign) Jackson writes in plain notation. A schema may declare any
   * scale (a hostile one 131072); past this one the decimal is written in exponent notation, which
   * is still an exact JSON number, instead of failing the dump.
   */
  static final int PLAIN_SCALE_LIMIT = 9999;

  /**
   * The seconds from the epoch of the first and last date-times {@code java.time} can show (years
   * -999,999,999 and 999,999,999); a timestamp outside them is written as its count of units.
   */
  static final long FIRST_DATE_TIME_SECOND = LocalDateTime.MIN.toEpochSecond(ZoneOffset.UTC);

  static final long LAST_DATE_TIME_SECOND = LocalDateTime.MAX.toEpochSecond(ZoneOffset.UTC);

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
    List<String> keys = keys(fields, topNames);
    StringWriter text = new StringWriter();
    try (JsonGenerator json = JSON.createGenerator(text)) {
      json.writeStartObject();
      for (int c = 0; c < columns.size(); c++) {
        json.writeFieldName(keys.get(c));
        value(columns.get(c), fields.get(c), row, json);
      }
      json.writeEndObject();
    } catch (IOException e) {
      throw unexpected(e);
    }
    return text.toString();
  }

  /** {@code text} as a JSON string, quotes included. */
  static String quoted(String text) {
    return '"' + new String(JsonStringEncoder.getInstance().quoteAsString(text)) + '"';
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

  private static void value(ValueVector vector, Field field, int index, JsonGenerator json)
      throws IOException {
    if (vector.isNull(index)) {
      json.writeNull();
      return;
    }
    ArrowType type = field.getType();
    switch (type.getTypeID()) {
      case Null:
        json.writeNull();
        return;
      case Bool:
      case Decimal:
      case FloatingPoint:
        number(vector.getObject(index), json);
        return;
      case Int:
        integer((BaseIntVector) vector, (ArrowType.Int) type, index, json);
        return;
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        // Jackson's default base64: the standard alphabet with padding, no line breaks.
        json.writeBinary((byte[]) vector.getObject(index));
        return;
      case Date:
        Object date = vector.getObject(index);
        if (date instanceof Integer) {
          json.writeString(LocalDate.ofEpochDay((Integer) date).toString());
        } else if (date instanceof LocalDateTime) {
          json.writeString(((LocalDateTime) date).toLocalDate().toString());
        } else {
          json.writeString(String.valueOf(date));
        }
        return;
      case Timestamp:
        timestamp((TimeStampVector) vector, (ArrowType.Timestamp) type, index, json);
        return;
      case Struct:
        struct((StructVector) vector, field, index, json);
        return;
      case List:
      case LargeList:
      case FixedSizeList:
        list(vector, field, index, json);
        return;
      case Map:
        map((ListVector) vector, field, index, json);
        return;
      default:
        // Strings (their getObject is Arrow's Text), times, intervals, durations, unions: as text.
        Object other = vector.getObject(index);
        if (other instanceof byte[]) {
          json.writeBinary((byte[]) other);
        } else {
          json.writeString(String.valueOf(other));
        }
    }
  }

  /** An integer; unsigned ones as their unsigned value (getObject gives some as signed or char). */
  private static void integer(
      BaseIntVector vector, ArrowType.Int type, int index, JsonGenerator json) throws IOException {
    long value = vector.getValueAsLong(index);
    if (type.getIsSigned()) {
      json.writeNumber(value);
    } else if (type.getBitWidth() == 64) {
      json.writeNumber(Long.toUnsignedString(value));
    } else {
      json.writeNumber(value & ((1L << type.getBitWidth()) - 1));
    }
  }

  private static void number(Object value, JsonGenerator json) throws IOException {
    if (value instanceof Boolean) {
      json.writeBoolean((Boolean) value);
    } else if (value instanceof BigDecimal) {
      BigDecimal decimal = (BigDecimal) value;
      if (Math.abs(decimal.scale()) <= PLAIN_SCALE_LIMIT) {
        json.writeNumber(decimal);
      } else {
        json.writeNumber(decimal.toString());
      }
    } else if (value instanceof Double) {
      json.writeNumber((Double) value);
    } else if (value instanceof Float) {
      json.writeNumber((Float) value);
    } else {
      // A half float, whose getObject is its 16 bits as a Short: written as that number.
      json.writeNumber(String.valueOf(value));
    }
  }

  private static void timestamp(
      TimeStampVector vector, ArrowType.Timestamp type, int index, JsonGenerator json)
      throws IOException {
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
    if (seconds < FIRST_DATE_TIME_SECOND || seconds > LAST_DATE_TIME_SECOND) {
      // Past the years a date-time can show (a hostile or garbled value): the count itself.
      json.writeString(value + " " + unit.name().toLowerCase(Locale.ROOT) + "s from the epoch");
      return;
    }
    LocalDateTime utc = LocalDateTime.ofEpochSecond(seconds, (int) nanos, ZoneOffset.UTC);
    String text = FRACTIONS[precision].format(utc);
    // With a time zone the value is an instant: show it in UTC. Without, it is a wall-clock time.
    json.writeString(type.getTimezone() == null ? text : text + "Z");
  }

  private static void struct(StructVector vector, Field field, int index, JsonGenerator json)
      throws IOException {
    List<Field> children = field.getChildren();
    List<String> keys = keys(children, new ArrayList<>());
    json.writeStartObject();
    for (int c = 0; c < children.size(); c++) {
      json.writeFieldName(keys.get(c));
      value(vector.getChildByOrdinal(c), children.get(c), index, json);
    }
    json.writeEndObject();
  }

  private static void list(ValueVector vector, Field field, int index, JsonGenerator json)
      throws IOException {
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
    json.writeStartArray();
    for (long i = start; i < end; i++) {
      value(elements, elementField, (int) i, json);
    }
    json.writeEndArray();
  }

  private static void map(ListVector vector, Field field, int index, JsonGenerator json)
      throws IOException {
    int start = vector.getOffsetBuffer().getInt((long) index * 4);
    int end = vector.getOffsetBuffer().getInt((long) (index + 1) * 4);
    StructVector entries = (StructVector) vector.getDataVector();
    Field entryField = field.getChildren().get(0);
    Field keyField = entryField.getChildren().get(0);
    Field valueField = entryField.getChildren().get(1);
    ValueVector keys = entries.getChildByOrdinal(0);
    ValueVector values = entries.getChildByOrdinal(1);
    boolean textKeys = isText(keyField.getType());
    json.writeStartObject();
    for (int i = start; i < end; i++) {
      json.writeFieldName(
          textKeys && !keys.isNull(i)
              ? String.valueOf(keys.getObject(i))
              : jsonText(keys, keyField, i));
      value(values, valueField, i, json);
    }
    json.writeEndObject();
  }

  /** One value as JSON text: a map key that is not a string. */
  private static String jsonText(ValueVector vector, Field field, int index) throws IOException {
    StringWriter text = new StringWriter();
    try (JsonGenerator json = JSON.createGenerator(text)) {
      value(vector, field, index, json);
    }
    return text.toString();
  }

  private static boolean isText(ArrowType type) {
    String id = type.getTypeID().name();
    return id.equals("Utf8") || id.equals("LargeUtf8") || id.equals("Utf8View");
  }

  /**
   * Jackson failing while it writes into a {@link StringWriter}: only a value written where JSON
   * allows none, a bug here.
   */
  private static IllegalStateException unexpected(IOException e) {
    return new IllegalStateException("JSON writer failed: " + e.getMessage(), e);
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
