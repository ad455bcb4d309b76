package dev.quiver.ipc;

import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Streams of one dictionary-encoded string column, {@code color}, written message by message
 * ({@link RawStreamWriter}) so that they may hold what Arrow's own writer would not: delta
 * dictionaries, and replacements. For the IPC tests and for the cache's tests of such streams.
 */
public final class DictionaryStreams {

  public static final long COLOR_ID = 3;
  static final DictionaryEncoding COLOR_ENCODING =
      new DictionaryEncoding(COLOR_ID, false, new ArrowType.Int(32, true));

  /** The strings of {@link #withDelta}'s batches, in order. */
  public static final List<List<String>> WITH_DELTA_STRINGS =
      List.of(Arrays.asList("apple", "banana", null), List.of("cherry", "apple"));

  private DictionaryStreams() {}

  /**
   * Dictionary {@code apple, banana}; a batch {@code [0, 1, null]}; a delta adding {@code cherry};
   * a batch {@code [2, 0]}.
   */
  public static byte[] withDelta(BufferAllocator allocator, StreamCodec codec) throws IOException {
    try (VarCharVector first = strings(allocator, "d", "apple", "banana");
        VarCharVector delta = strings(allocator, "d", "cherry");
        VectorSchemaRoot batch = indexRoot(allocator)) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, first, false);
      setIndices(batch, 0, 1, null);
      stream.batch(batch);
      stream.dictionary(COLOR_ID, delta, true);
      setIndices(batch, 2, 0);
      return stream.batch(batch).end().compressed(codec);
    }
  }

  /**
   * Dictionary {@code apple, banana}; a batch {@code [0, 1]}; a replacement {@code xylophone, yak}
   * (not a delta) once the batch used the first; a batch {@code [1, 0]}.
   */
  public static byte[] replacedAfterUse(BufferAllocator allocator, StreamCodec codec)
      throws IOException {
    try (VarCharVector first = strings(allocator, "d", "apple", "banana");
        VarCharVector replacement = strings(allocator, "d", "xylophone", "yak");
        VectorSchemaRoot batch = indexRoot(allocator)) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, first, false);
      setIndices(batch, 0, 1);
      stream.batch(batch);
      // Decoded together, batch 0 would silently read the replacement's values.
      stream.dictionary(COLOR_ID, replacement, false);
      setIndices(batch, 1, 0);
      return stream.batch(batch).end().compressed(codec);
    }
  }

  /** The strings the column {@code name} of {@code root} encodes through {@code dictionaries}. */
  public static List<String> decodeStrings(
      VectorSchemaRoot root, String name, DictionaryProvider dictionaries) {
    FieldVector indices = root.getVector(name);
    long id = indices.getField().getDictionary().getId();
    try (ValueVector values = DictionaryEncoder.decode(indices, dictionaries.lookup(id))) {
      return toStrings((VarCharVector) values);
    }
  }

  /** The stream's schema as IPC writes it: the encoded field has the dictionary's value type. */
  static Schema ipcSchema() {
    return new Schema(
        Collections.singletonList(
            new Field(
                "color", new FieldType(true, ArrowType.Utf8.INSTANCE, COLOR_ENCODING), null)));
  }

  /** A root for the index column as Arrow Java holds it: the field has the index type. */
  static VectorSchemaRoot indexRoot(BufferAllocator allocator) {
    Field indices =
        new Field(
            "color", new FieldType(true, COLOR_ENCODING.getIndexType(), COLOR_ENCODING), null);
    return VectorSchemaRoot.create(new Schema(Collections.singletonList(indices)), allocator);
  }

  static void setIndices(VectorSchemaRoot root, Integer... indices) {
    IntVector vector = (IntVector) root.getVector("color");
    vector.allocateNew(indices.length);
    for (int i = 0; i < indices.length; i++) {
      if (indices[i] == null) {
        vector.setNull(i);
      } else {
        vector.set(i, indices[i]);
      }
    }
    root.setRowCount(indices.length);
  }

  static VarCharVector strings(BufferAllocator allocator, String name, String... values) {
    VarCharVector vector = new VarCharVector(name, allocator);
    vector.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        vector.setNull(i);
      } else {
        vector.setSafe(i, values[i].getBytes(StandardCharsets.UTF_8));
      }
    }
    vector.setValueCount(values.length);
    return vector;
  }

  static List<String> toStrings(VarCharVector vector) {
    List<String> out = new ArrayList<>(vector.getValueCount());
    for (int i = 0; i < vector.getValueCount(); i++) {
      out.add(vector.isNull(i) ? null : new String(vector.get(i), StandardCharsets.UTF_8));
    }
    return out;
  }
}
