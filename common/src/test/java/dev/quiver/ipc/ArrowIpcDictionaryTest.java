package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.assertRefused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ArrowIpcDictionaryTest extends AllocatorTestBase {

  private static final long COLOR_ID = 3;
  private static final DictionaryEncoding COLOR_ENCODING =
      new DictionaryEncoding(COLOR_ID, false, new ArrowType.Int(32, true));

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void dictionaryEncodedStringColumnRoundTrips(StreamCodec codec) throws IOException {
    String[] palette = {"red", "green", "blue", "a colour with a much longer name"};
    List<String> colors = new ArrayList<>();
    for (int r = 0; r < 1000; r++) {
      colors.add(r % 11 == 0 ? null : palette[(r * 7) % palette.length]);
    }
    byte[] bytes;
    try (VarCharVector dictionaryValues = strings("color-values", palette);
        VarCharVector plain = strings("color", colors.toArray(new String[0]));
        BigIntVector ids = new BigIntVector("id", allocator)) {
      Dictionary dictionary = new Dictionary(dictionaryValues, COLOR_ENCODING);
      ids.allocateNew(colors.size());
      for (int r = 0; r < colors.size(); r++) {
        ids.set(r, r);
      }
      ids.setValueCount(colors.size());
      try (FieldVector indices = (FieldVector) DictionaryEncoder.encode(plain, dictionary)) {
        VectorSchemaRoot root = new VectorSchemaRoot(Arrays.asList(indices, ids));
        bytes =
            ArrowIpc.encode(root, new DictionaryProvider.MapDictionaryProvider(dictionary), codec);
      }
    }

    try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "dictionary stream")) {
      assertTrue(decoded.hasDictionaries());
      assertEquals(Collections.singleton(COLOR_ID), decoded.getDictionaryIds());
      Field color = decoded.schema().findField("color");
      assertEquals(COLOR_ENCODING, color.getDictionary());
      assertEquals(colors, decodeStrings(decoded, 0, "color"));
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void deltaDictionaryExtendsTheValuesEarlierBatchesUse(StreamCodec codec) throws IOException {
    byte[] bytes;
    try (VarCharVector first = strings("d", "apple", "banana");
        VarCharVector delta = strings("d", "cherry");
        VectorSchemaRoot batch = indexRoot()) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, first, false);
      setIndices(batch, 0, 1, null);
      stream.batch(batch);
      stream.dictionary(COLOR_ID, delta, true);
      setIndices(batch, 2, 0);
      stream.batch(batch).end();
      bytes = stream.compressed(codec);
    }
    try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "delta stream")) {
      assertEquals(
          Arrays.asList("apple", "banana", "cherry"),
          toStrings((VarCharVector) decoded.lookup(COLOR_ID).getVector()));
      assertEquals(Arrays.asList("apple", "banana", null), decodeStrings(decoded, 0, "color"));
      assertEquals(Arrays.asList("cherry", "apple"), decodeStrings(decoded, 1, "color"));
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void replacingADictionaryAfterABatchUsedItIsRejected(StreamCodec codec) throws IOException {
    byte[] bytes;
    try (VarCharVector first = strings("d", "apple", "banana");
        VarCharVector replacement = strings("d", "xylophone", "yak");
        VectorSchemaRoot batch = indexRoot()) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, first, false);
      setIndices(batch, 0, 1);
      stream.batch(batch);
      // Decoded together, batch 0 would silently read the replacement's values.
      stream.dictionary(COLOR_ID, replacement, false);
      setIndices(batch, 1, 0);
      stream.batch(batch).end();
      bytes = stream.compressed(codec);
    }
    assertRefused(bytes, codec, allocator, "replacement stream", "dictionary " + COLOR_ID);
  }

  @Test
  void replacingADictionaryBeforeAnyBatchUsedItIsAccepted() throws IOException {
    byte[] bytes;
    try (VarCharVector first = strings("d", "apple", "banana");
        VarCharVector replacement = strings("d", "xylophone", "yak");
        VectorSchemaRoot batch = indexRoot()) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, first, false).dictionary(COLOR_ID, replacement, false);
      setIndices(batch, 1, 0);
      stream.batch(batch).end();
      bytes = stream.toByteArray();
    }
    try (DecodedStream decoded =
        ArrowIpc.decode(bytes, StreamCodec.NONE, allocator, "early replacement")) {
      assertEquals(Arrays.asList("yak", "xylophone"), decodeStrings(decoded, 0, "color"));
    }
  }

  @Test
  void dictionaryBatchForAnIdOutsideTheSchemaIsRejected() throws IOException {
    byte[] bytes;
    try (VarCharVector values = strings("d", "apple");
        VectorSchemaRoot batch = indexRoot()) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      stream.dictionary(COLOR_ID, values, false).dictionary(99, values, false);
      setIndices(batch, 0);
      bytes = stream.batch(batch).end().toByteArray();
    }
    assertRefused(
        bytes,
        StreamCodec.NONE,
        allocator,
        "unknown dictionary",
        "dictionary 99 is not in the schema");
  }

  @Test
  void batchUsingADictionaryNoBatchDefinedIsRejected() throws IOException {
    byte[] bytes;
    try (VectorSchemaRoot batch = indexRoot()) {
      setIndices(batch, 0, 1);
      bytes = new RawStreamWriter().schema(ipcSchema()).batch(batch).end().toByteArray();
    }
    assertRefused(
        bytes, StreamCodec.NONE, allocator, "undefined dictionary", "uses dictionary " + COLOR_ID);
  }

  /** The stream's schema as IPC writes it: the encoded field has the dictionary's value type. */
  private static Schema ipcSchema() {
    return new Schema(
        Collections.singletonList(
            new Field(
                "color", new FieldType(true, ArrowType.Utf8.INSTANCE, COLOR_ENCODING), null)));
  }

  /** A root for the index column as Arrow Java holds it: the field has the index type. */
  private VectorSchemaRoot indexRoot() {
    Field indices =
        new Field(
            "color", new FieldType(true, COLOR_ENCODING.getIndexType(), COLOR_ENCODING), null);
    return VectorSchemaRoot.create(new Schema(Collections.singletonList(indices)), allocator);
  }

  private static void setIndices(VectorSchemaRoot root, Integer... indices) {
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

  /** The strings that batch {@code index}'s column {@code name} encodes. */
  private List<String> decodeStrings(DecodedStream decoded, int index, String name) {
    ArrowRecordBatch batch = decoded.batches().get(index);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      new VectorLoader(root).load(batch);
      FieldVector indices = root.getVector(name);
      Dictionary dictionary = decoded.lookup(indices.getField().getDictionary().getId());
      try (ValueVector values = DictionaryEncoder.decode(indices, dictionary)) {
        return toStrings((VarCharVector) values);
      }
    }
  }

  private VarCharVector strings(String name, String... values) {
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

  private static List<String> toStrings(VarCharVector vector) {
    List<String> out = new ArrayList<>(vector.getValueCount());
    for (int i = 0; i < vector.getValueCount(); i++) {
      out.add(vector.isNull(i) ? null : new String(vector.get(i), StandardCharsets.UTF_8));
    }
    return out;
  }
}
