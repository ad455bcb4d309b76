package dev.quiver.shuffle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Every value of a batch in a comparable form ({@code contentToTSVString} prints binary as ids).
 */
final class Values {

  private Values() {}

  /** Row by row, column by column. */
  static List<List<Object>> of(VectorSchemaRoot root) {
    List<List<Object>> rows = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<Object> row = new ArrayList<>();
      for (FieldVector vector : root.getFieldVectors()) {
        row.add(comparable(vector.getObject(r)));
      }
      rows.add(row);
    }
    return rows;
  }

  private static Object comparable(Object value) {
    if (value instanceof byte[]) {
      return Arrays.toString((byte[]) value);
    }
    if (value instanceof List) {
      List<Object> list = new ArrayList<>();
      for (Object element : (List<?>) value) {
        list.add(comparable(element));
      }
      return list;
    }
    if (value instanceof Map) {
      Map<Object, Object> map = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        map.put(comparable(e.getKey()), comparable(e.getValue()));
      }
      return map;
    }
    return value == null ? null : value.toString();
  }
}
