package dev.quiver.ipc;

import static dev.quiver.ipc.DictionaryStreams.COLOR_ID;
import static dev.quiver.ipc.DictionaryStreams.ipcSchema;
import static dev.quiver.ipc.DictionaryStreams.setIndices;
import static dev.quiver.ipc.DictionaryStreams.strings;
import static dev.quiver.ipc.DictionaryStreams.toStrings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.Codecs;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;

/**
 * Delta dictionaries appended to a dictionary whose buffers are larger than its values need. The
 * format allows a buffer to be longer than its values; Arrow's append grew the dictionary from its
 * buffers' capacities, copied a 64-byte validity bitmap into a smaller new one, threw, and lost the
 * buffers it had just allocated (the fuzzer's {@code finding-delta-dictionary-leak}).
 */
class IpcDeltaDictionaryTest extends AllocatorTestBase {

  private static final String SEED =
      "/dev/quiver/fuzz/IpcDecodeFuzzTestInputs/uncompressedStream/finding-delta-dictionary-leak";

  @Test
  void aDeltaAppendsToADictionaryWithAnOversizedValidityBitmap() throws IOException {
    byte[] stream = oversizedValidityThenDelta();
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "delta")) {
      VarCharVector dictionary = (VarCharVector) decoded.lookup(COLOR_ID).getVector();
      assertEquals(
          Arrays.asList("color-0", "color-1", "color-2", "color-3"), toStrings(dictionary));
      assertEquals(1, decoded.batches().size());
      try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
        new VectorLoader(root).load(decoded.batches().get(0));
        assertEquals(
            Arrays.asList("color-3", "color-0"),
            DictionaryStreams.decodeStrings(root, "color", decoded));
      }
    }
    assertEquals(0, allocator.getAllocatedMemory(), "the decode leaked");
  }

  /**
   * The same stream under every allocation limit up to what it needs: it decodes, or it fails with
   * Quiver's error naming the stream, and whichever allocation of the delta's append was refused,
   * nothing stays allocated.
   */
  @Test
  void aDeltaAppendRefusedMemoryAnywhereLeavesNothingAllocated() throws IOException {
    byte[] stream = oversizedValidityThenDelta();
    long peak;
    try (BufferAllocator unlimited = allocator.newChildAllocator("unlimited", 0, Long.MAX_VALUE)) {
      ArrowIpc.decode(stream, StreamCodec.NONE, unlimited, "delta").close();
      peak = unlimited.getPeakMemoryAllocation();
    }
    int refused = 0;
    for (long limit = 0; limit <= peak; limit += 8) {
      try (BufferAllocator limited = allocator.newChildAllocator("limit " + limit, 0, limit)) {
        try {
          ArrowIpc.decode(stream, StreamCodec.NONE, limited, "delta").close();
        } catch (IpcFormatException e) {
          refused++;
          assertTrue(e.getMessage().contains("(delta)"), e.getMessage());
        }
        String what = "limit " + limit + " leaked:\n" + limited.toVerboseString();
        assertEquals(0, limited.getAllocatedMemory(), what);
      }
    }
    assertTrue(refused > 0, "no limit was low enough to refuse anything");
  }

  /** The fuzzer's input, fed as {@code IpcDecodeFuzzTest#uncompressedStream} feeds it. */
  @Test
  void theFuzzersDeltaDictionaryInputEndsInQuiversErrorWithNothingLeaked() throws Throwable {
    byte[] input;
    try (InputStream in = IpcDeltaDictionaryTest.class.getResourceAsStream(SEED)) {
      assertNotNull(in, SEED);
      input = in.readAllBytes();
    }
    // The selector byte: the low three bits pick the codec (FuzzCodecs.CODECS); 3 is Spark snappy.
    assertEquals(3, input[0] & 7);
    StreamCodec codec = SparkStreamCodec.SNAPPY;
    byte[] compressed = Codecs.compress(codec, input, 1, input.length - 1);
    Throwable thrown = null;
    try (BufferAllocator root = new RootAllocator()) {
      try (DecodedStream stream = ArrowIpc.decode(compressed, codec, root, "fuzz")) {
        // As the fuzz target reads it: every batch loaded.
        for (ArrowRecordBatch batch : stream.batches()) {
          try (VectorSchemaRoot loaded = VectorSchemaRoot.create(stream.schema(), root)) {
            new VectorLoader(loaded).load(batch);
          }
        }
      } catch (Throwable t) {
        thrown = t;
      }
      assertEquals(0, root.getAllocatedMemory(), () -> "leaked:\n" + root.toVerboseString());
    }
    assertNotNull(thrown, "the input decoded");
    if (!(thrown instanceof IpcFormatException)) {
      throw new AssertionError("not Quiver's exception: " + thrown, thrown);
    }
    // The delta now appends; what stops the input is the garbage after its end-of-stream marker.
    assertTrue(
        thrown.getMessage().contains("(fuzz)")
            && thrown.getMessage().contains("bytes follow the end-of-stream marker"),
        thrown.getMessage());
  }

  /**
   * Dictionary {@code color-0, color-1, color-2} with a 64-byte validity bitmap (1 byte needed); a
   * delta adding {@code color-3}; a batch {@code [3, 0]}.
   */
  private byte[] oversizedValidityThenDelta() throws IOException {
    byte[] validity = new byte[64];
    Arrays.fill(validity, (byte) 0xff);
    ByteBuffer offsets = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    offsets.putInt(0).putInt(7).putInt(14).putInt(21);
    byte[] data = "color-0color-1color-2".getBytes(StandardCharsets.UTF_8);
    try (ArrowBuf validityBuf = buffer(validity);
        ArrowBuf offsetsBuf = buffer(offsets.array());
        ArrowBuf dataBuf = buffer(data);
        VarCharVector delta = strings(allocator, "d", "color-3");
        VectorSchemaRoot batch = DictionaryStreams.indexRoot(allocator)) {
      RawStreamWriter stream = new RawStreamWriter().schema(ipcSchema());
      try (ArrowDictionaryBatch first =
          new ArrowDictionaryBatch(
              COLOR_ID,
              new ArrowRecordBatch(
                  3, List.of(new ArrowFieldNode(3, 0)), List.of(validityBuf, offsetsBuf, dataBuf)),
              false)) {
        stream.message(first);
      }
      stream.dictionary(COLOR_ID, delta, true);
      setIndices(batch, 3, 0);
      return stream.batch(batch).end().toByteArray();
    }
  }

  private ArrowBuf buffer(byte[] bytes) {
    ArrowBuf buffer = allocator.buffer(bytes.length);
    buffer.setBytes(0, bytes);
    buffer.writerIndex(bytes.length);
    return buffer;
  }
}
