package dev.quiver.ipc;

import static dev.quiver.ipc.DictionaryStreams.COLOR_ENCODING;
import static dev.quiver.ipc.DictionaryStreams.COLOR_ID;
import static dev.quiver.ipc.DictionaryStreams.WITH_DELTA_STRINGS;
import static dev.quiver.ipc.DictionaryStreams.ipcSchema;
import static dev.quiver.ipc.DictionaryStreams.setIndices;
import static dev.quiver.ipc.DictionaryStreams.toStrings;
import static dev.quiver.ipc.IpcTestSupport.assertRefused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ArrowIpcDictionaryTest extends AllocatorTestBase {

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
    byte[] bytes = DictionaryStreams.withDelta(allocator, codec);
    try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, "delta stream")) {
      assertEquals(
          Arrays.asList("apple", "banana", "cherry"),
          toStrings((VarCharVector) decoded.lookup(COLOR_ID).getVector()));
      assertEquals(WITH_DELTA_STRINGS.get(0), decodeStrings(decoded, 0, "color"));
      assertEquals(WITH_DELTA_STRINGS.get(1), decodeStrings(decoded, 1, "color"));
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void replacingADictionaryAfterABatchUsedItIsRejected(StreamCodec codec) throws IOException {
    byte[] bytes = DictionaryStreams.replacedAfterUse(allocator, codec);
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

  /** The strings that batch {@code index}'s column {@code name} encodes. */
  private List<String> decodeStrings(DecodedStream decoded, int index, String name) {
    ArrowRecordBatch batch = decoded.batches().get(index);
    try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      new VectorLoader(root).load(batch);
      return DictionaryStreams.decodeStrings(root, name, decoded);
    }
  }

  private VarCharVector strings(String name, String... values) {
    return DictionaryStreams.strings(allocator, name, values);
  }

  private VectorSchemaRoot indexRoot() {
    return DictionaryStreams.indexRoot(allocator);
  }
}
