package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampSecTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The JSON of {@code --rows}, as Jackson's generator writes it: the values whose text a writer can
 * get wrong (escapes, decimals, floats JSON has no number for, map keys that are not strings).
 */
class JsonRowsTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private BufferAllocator allocator;

  @BeforeEach
  void allocator() {
    allocator = new RootAllocator(1 << 20);
  }

  @AfterEach
  void allocatorIsEmpty() {
    assertEquals(0, allocator.getAllocatedMemory());
    allocator.close();
  }

  @Test
  void stringsAreEscapedAndReadBackAsWritten() throws IOException {
    String[] values = {
      "a\"b\\c", "line\nbreak\ttab\rreturn", "\u0001\u001f\b\f", "snow \u2603, clef \ud834\udd1e"
    };
    String[] expected = {
      "{\"s\":\"a\\\"b\\\\c\"}",
      "{\"s\":\"line\\nbreak\\ttab\\rreturn\"}",
      "{\"s\":\"\\u0001\\u001F\\b\\f\"}",
      "{\"s\":\"snow \u2603, clef \ud834\udd1e\"}"
    };
    try (VarCharVector strings = new VarCharVector("s", allocator)) {
      strings.allocateNew();
      for (int i = 0; i < values.length; i++) {
        strings.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
      }
      strings.setValueCount(values.length);
      for (int i = 0; i < values.length; i++) {
        String row = row(strings, i);
        assertEquals(expected[i], row);
        assertEquals(values[i], JSON.readTree(row).get("s").textValue());
      }
    }
  }

  @Test
  void decimalsArePlainNumbersWithTheirScale() {
    try (DecimalVector tiny = new DecimalVector("d", allocator, 38, 10);
        DecimalVector money = new DecimalVector("m", allocator, 10, 2)) {
      tiny.allocateNew();
      money.allocateNew();
      // BigDecimal's toString gives 1E-10 for the first; JSON readers take either, people not.
      tiny.setSafe(0, BigDecimal.valueOf(1, 10));
      money.setSafe(0, new BigDecimal("100.00"));
      tiny.setValueCount(1);
      money.setValueCount(1);
      assertEquals("{\"d\":0.0000000001}", row(tiny, 0));
      assertEquals("{\"m\":100.00}", row(money, 0));
    }
  }

  /** Found by fuzzing the dump of a shuffle file whose schema declared decimal(38, 131072). */
  @Test
  void aScaleTooLargeToWritePlainIsAnExactExponent() throws IOException {
    int scale = JsonRows.PLAIN_SCALE_LIMIT + 1;
    try (DecimalVector huge = new DecimalVector("d", allocator, 38, scale)) {
      huge.allocateNew();
      huge.setSafe(0, BigDecimal.valueOf(-7, scale));
      huge.setValueCount(1);
      String row = row(huge, 0);
      assertEquals("{\"d\":-7E-" + scale + "}", row);
      // A JSON reader that keeps decimals exact reads the value back.
      ObjectMapper exact =
          new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
      assertEquals(BigDecimal.valueOf(-7, scale), exact.readTree(row).get("d").decimalValue());
    }
  }

  @Test
  void aTimestampPastTheYearsADateTimeShowsIsItsCount() {
    try (TimeStampSecTZVector seconds = new TimeStampSecTZVector("t", allocator, "UTC")) {
      seconds.allocateNew(3);
      // Day 7,518,999,887,405, as the fuzzer's input has it (finding-timestamp-past-year-1e9).
      seconds.set(0, 7_518_999_887_405L * 86_400);
      seconds.set(1, JsonRows.LAST_DATE_TIME_SECOND);
      seconds.set(2, JsonRows.FIRST_DATE_TIME_SECOND - 1);
      seconds.setValueCount(3);
      assertEquals("{\"t\":\"649641590271792000 seconds from the epoch\"}", row(seconds, 0));
      assertEquals("{\"t\":\"+999999999-12-31T23:59:59Z\"}", row(seconds, 1));
      assertEquals(
          "{\"t\":\"" + (JsonRows.FIRST_DATE_TIME_SECOND - 1) + " seconds from the epoch\"}",
          row(seconds, 2));
    }
  }

  @Test
  void floatsJsonHasNoNumberForAreStrings() {
    double[] doubles = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.5};
    String[] expected = {"\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "1.5"};
    try (Float8Vector vector = new Float8Vector("x", allocator);
        Float4Vector single = new Float4Vector("f", allocator)) {
      vector.allocateNew(doubles.length);
      for (int i = 0; i < doubles.length; i++) {
        vector.set(i, doubles[i]);
      }
      vector.setValueCount(doubles.length);
      for (int i = 0; i < doubles.length; i++) {
        assertEquals("{\"x\":" + expected[i] + "}", row(vector, i));
      }
      single.allocateNew(1);
      single.set(0, 0.1f);
      single.setValueCount(1);
      // The float's own shortest text, not the double it widens to (0.10000000149011612).
      assertEquals("{\"f\":0.1}", row(single, 0));
    }
  }

  @Test
  void mapKeysThatAreNotStringsAreTheirJsonText() throws IOException {
    try (MapVector map = MapVector.empty("m", allocator, false)) {
      UnionMapWriter writer = map.getWriter();
      writer.setPosition(0);
      writer.startMap();
      for (int k = 1; k <= 2; k++) {
        writer.startEntry();
        writer.key().integer().writeInt(k);
        writer.value().bigInt().writeBigInt(10L * k);
        writer.endEntry();
      }
      writer.endMap();
      writer.setValueCount(1);
      String row = row(map, 0);
      assertEquals("{\"m\":{\"1\":10,\"2\":20}}", row);
      JsonNode read = JSON.readTree(row).get("m");
      assertEquals(20, read.get("2").asInt());
    }
  }

  @Test
  void fieldNamesInSchemaLinesAreQuotedAsJsonStrings() {
    Field field = new Field("a\"b\n", FieldType.nullable(new ArrowType.Int(32, true)), null);
    assertEquals("\"a\\\"b\\n\" Int(32, true)", Report.describe(field));
    Field unnamed = new Field("", FieldType.notNullable(new ArrowType.Utf8()), null);
    assertEquals("\"\" Utf8 not null", Report.describe(unnamed));
  }

  /** Row {@code index} of one column, keyed by its field's name. */
  private static String row(FieldVector vector, int index) {
    List<FieldVector> columns = Collections.singletonList(vector);
    List<Field> fields = new ArrayList<>(Arrays.asList(vector.getField()));
    return new JsonRows(null).row(columns, fields, index);
  }
}
