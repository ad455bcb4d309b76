package dev.quiver.tools;

import com.google.errorprone.annotations.FormatMethod;
import java.io.PrintStream;
import java.util.List;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/** Where a dump writes: the summary lines, and the rows as JSON lines if asked for. */
final class Report {

  private final PrintStream summary;
  private final PrintStream rows;
  private final JsonRows json;
  private final long rowLimit;
  private long rowsWritten;

  /**
   * @param rows where JSON lines go, or null to write none
   * @param rowLimit the most rows to write per file
   */
  Report(PrintStream summary, PrintStream rows, List<String> names, long rowLimit) {
    this.summary = summary;
    this.rows = rows;
    this.json = new JsonRows(names);
    this.rowLimit = rowLimit;
  }

  void line(String text) {
    summary.println(text);
  }

  @FormatMethod
  void line(String format, Object... args) {
    summary.println(String.format(format, args));
  }

  /** Starts a new file: the row limit counts again. */
  void startFile() {
    rowsWritten = 0;
  }

  boolean wantsRows() {
    return rows != null && rowsWritten < rowLimit;
  }

  /** Writes the rows of one batch (as many as the limit allows). */
  void rows(List<? extends ValueVector> columns, List<Field> fields, int rowCount) {
    for (int r = 0; r < rowCount && wantsRows(); r++) {
      rows.println(json.row(columns, fields, r));
      rowsWritten++;
    }
  }

  /** The schema, one top-level field a line. */
  void schema(Schema schema, String where) {
    List<Field> fields = schema.getFields();
    line("schema (%s): %d %s", where, fields.size(), fields.size() == 1 ? "field" : "fields");
    for (int i = 0; i < fields.size(); i++) {
      line("  %2d %s", i, describe(fields.get(i)));
    }
  }

  /** A field as {@code "name" Type<children> [not null]}. */
  static String describe(Field field) {
    StringBuilder out = new StringBuilder();
    // Arrow reads an empty name in a file as null.
    out.append(JsonRows.quoted(field.getName() == null ? "" : field.getName()));
    out.append(' ');
    ArrowType type = field.getType();
    out.append(type);
    List<Field> children = field.getChildren();
    if (!children.isEmpty()) {
      out.append('<');
      for (int i = 0; i < children.size(); i++) {
        if (i > 0) {
          out.append(", ");
        }
        out.append(describe(children.get(i)));
      }
      out.append('>');
    }
    if (!field.isNullable()) {
      out.append(" not null");
    }
    DictionaryEncoding dictionary = field.getDictionary();
    if (dictionary != null) {
      out.append(" (dictionary ")
          .append(dictionary.getId())
          .append(", indices ")
          .append(dictionary.getIndexType())
          .append(')');
    }
    return out.toString();
  }
}
