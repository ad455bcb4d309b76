package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Damaged input must end in an {@link IpcFormatException} that names the source (or, where the
 * damage is harmless, in the right answer): never another exception type, never a leak.
 */
@org.junit.jupiter.api.Tag("bad-input")
class ArrowIpcBadInputTest extends AllocatorTestBase {

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void streamCutAtAnyOffsetIsReported(StreamCodec codec) throws IOException {
    byte[] full = twoBatchesOfAllTypes(codec);
    List<String> expected = rowsOfTwoBatches();
    int harmless = 0;
    for (int length = 0; length < full.length; length++) {
      byte[] cut = Arrays.copyOf(full, length);
      if (decodeOrReport(cut, codec, "cut at " + length, expected) == Outcome.DECODED) {
        harmless++;
      }
    }
    if (codec == StreamCodec.NONE) {
      // Without a codec's own framing every cut loses IPC bytes, end-of-stream marker included.
      assertEquals(0, harmless, "uncompressed cuts that decoded");
    } else {
      // Only a cut inside the codec's own trailer can leave every IPC byte in place.
      assertTrue(harmless < 32, "harmless cuts: " + harmless);
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void flippedBytesAreReportedOrReadable(StreamCodec codec) throws IOException {
    byte[] full = twoBatchesOfAllTypes(codec);
    // Every third byte, with a mask that varies along the stream, keeps the run short.
    int[] masks = {0x01, 0x80, 0xff, 0x10};
    for (int at = 0; at < full.length; at += 3) {
      byte[] damaged = full.clone();
      int mask = masks[(at / 3) % masks.length];
      damaged[at] ^= (byte) mask;
      // A flip inside a value buffer gives other values; nothing but a checksum can see that.
      decodeOrReport(damaged, codec, "flip " + mask + " at " + at, null);
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void randomBytesAreReported(StreamCodec codec) throws IOException {
    Random random = new Random(20240601);
    for (int i = 0; i < 300; i++) {
      byte[] noise = new byte[random.nextInt(4096)];
      random.nextBytes(noise);
      expectReported(noise, codec, "noise " + i);
    }
  }

  @Test
  void randomBytesAfterAValidSchemaAreReported() throws IOException {
    byte[] schemaOnly = new RawStreamWriter().schema(TestData.allTypesSchema()).toByteArray();
    Random random = new Random(7);
    for (int i = 0; i < 300; i++) {
      byte[] stream = Arrays.copyOf(schemaOnly, schemaOnly.length + 8 + random.nextInt(2048));
      byte[] noise = new byte[stream.length - schemaOnly.length];
      random.nextBytes(noise);
      System.arraycopy(noise, 0, stream, schemaOnly.length, noise.length);
      if (i % 2 == 0) {
        // Half of them get a well-formed message prefix so the noise reaches the metadata parser.
        ByteBuffer prefix = ByteBuffer.wrap(stream, schemaOnly.length, 8);
        prefix.order(ByteOrder.LITTLE_ENDIAN).putInt(MessageSerializer.IPC_CONTINUATION_TOKEN);
        prefix.putInt(noise.length - 8);
      }
      expectReported(stream, StreamCodec.NONE, "noise after schema " + i);
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#streamCodecs")
  void emptyInputIsReported(StreamCodec codec) {
    expectReported(new byte[0], codec, "empty input");
  }

  @Test
  void compressedBytesReadWithTheWrongCodecAreReported() throws IOException {
    byte[] lz4;
    byte[] zstd;
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 8, 7)) {
      lz4 = ArrowIpc.encode(root, null, SparkStreamCodec.LZ4);
      zstd = ArrowIpc.encode(root, null, SparkStreamCodec.ZSTD);
    }
    expectReported(lz4, SparkStreamCodec.ZSTD, "lz4 read as zstd");
    expectReported(zstd, SparkStreamCodec.LZ4, "zstd read as lz4");
    expectReported(lz4, StreamCodec.NONE, "lz4 read as plain");
    expectReported(zstd, StreamCodec.NONE, "zstd read as plain");
  }

  @Test
  void bodyClaimPastAKnownLengthIsRefusedBeforeAllocating() throws IOException {
    byte[] stream = withBatchBodyLength(plainStream(), 64L << 20);
    try (BufferAllocator limited = allocator.newChildAllocator("limited", 0, 1 << 20)) {
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class,
              () -> ArrowIpc.decode(stream, StreamCodec.NONE, limited, "hostile body"));
      assertTrue(e.getMessage().contains("hostile body"), e.getMessage());
      assertTrue(e.getMessage().contains("claims 67108864 bytes of body"), e.getMessage());
      assertTrue(e.getMessage().contains("only"), e.getMessage());
      assertEquals(0, limited.getPeakMemoryAllocation());
    }
  }

  @Test
  void bodyClaimOfAStreamOfUnknownLengthCostsOnlyWhatArrives() throws IOException {
    byte[] stream = withBatchBodyLength(plainStream(), 64L << 20);
    try (BufferAllocator limited = allocator.newChildAllocator("limited", 0, 256L << 20)) {
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class,
              () ->
                  ArrowIpc.decode(
                      new java.io.ByteArrayInputStream(stream),
                      StreamCodec.NONE,
                      limited,
                      "hostile body"));
      assertTrue(e.getMessage().contains("truncated"), e.getMessage());
      // The first piece, not the 64 MiB claimed: the stream holds a few KiB.
      assertTrue(
          limited.getPeakMemoryAllocation() <= ArrowIpc.UNREAD_CLAIM_BYTES,
          "peak " + limited.getPeakMemoryAllocation());
      assertEquals(0, limited.getAllocatedMemory());
    }
  }

  @Test
  void aTrueBodyOverTheAllocatorLimitIsReported() throws IOException {
    byte[] stream =
        IpcTestSupport.streamOf(TestData.allTypes(allocator, 20_000, 3), SparkStreamCodec.LZ4);
    try (BufferAllocator limited = allocator.newChildAllocator("limited", 0, 256 << 10)) {
      IpcFormatException e =
          assertThrows(
              IpcFormatException.class,
              () -> ArrowIpc.decode(stream, SparkStreamCodec.LZ4, limited, "big body"));
      assertTrue(
          e.getMessage().contains("claims more memory than the decode may use"), e.getMessage());
      assertEquals(0, limited.getAllocatedMemory());
    }
  }

  @Test
  void bodyClaimBeyondWhatArrowCanLoadIsRefusedWhateverTheAllocator() throws IOException {
    // Over 2 GiB, an unlimited allocator would try to reserve it (and fail with an Error).
    byte[] stream = withBatchBodyLength(plainStream(), 1L << 40);
    expectReported(stream, StreamCodec.NONE, "terabyte body", "claims a body of " + (1L << 40));
  }

  @Test
  void bodyClaimPastTheEndOfTheStreamIsReported() throws IOException {
    byte[] plain = plainStream();
    long body = Message.getRootAsMessage(metadata(plain, 1)).bodyLength();
    expectReported(withBatchBodyLength(plain, body + 4096), StreamCodec.NONE, "long body");
    expectReported(withBatchBodyLength(plain, -8), StreamCodec.NONE, "negative body");
    expectReported(withBatchBodyLength(plain, body - 8), StreamCodec.NONE, "short body");
  }

  @Test
  void hugeMetadataLengthIsRefusedBeforeAllocating() throws IOException {
    byte[] plain = plainStream();
    int batch = messageOffset(plain, 1);
    byte[] hostile = plain.clone();
    ByteBuffer.wrap(hostile, batch + 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(0x7ffffff0);
    expectReported(hostile, StreamCodec.NONE, "hostile metadata", "metadata");
  }

  @Test
  void streamWithoutItsEndMarkerIsReported() throws IOException {
    byte[] plain = plainStream();
    // The end marker is a continuation token and a zero length.
    byte[] unterminated = Arrays.copyOf(plain, plain.length - 8);
    expectReported(unterminated, StreamCodec.NONE, "no end marker", "end-of-stream");
  }

  @Test
  void messageOfTheWrongKindIsReported() throws IOException {
    byte[] schemaTwice;
    byte[] batchFirst;
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0, 10)) {
      // A second schema where a batch should be, and a batch where the schema should be.
      schemaTwice =
          new RawStreamWriter()
              .schema(root.getSchema())
              .batch(root)
              .schema(root.getSchema())
              .end()
              .toByteArray();
      batchFirst = new RawStreamWriter().batch(root).end().toByteArray();
    }
    expectReported(schemaTwice, StreamCodec.NONE, "schema twice");
    expectReported(batchFirst, StreamCodec.NONE, "batch first");
  }

  private enum Outcome {
    DECODED,
    REPORTED
  }

  /**
   * Decodes {@code bytes}: either an {@link IpcFormatException} naming {@code source}, or a stream
   * whose every value reads (equal to {@code expected} when given). Anything else fails the test.
   */
  private Outcome decodeOrReport(
      byte[] bytes, StreamCodec codec, String source, List<String> expected) {
    try {
      try (DecodedStream decoded = ArrowIpc.decode(bytes, codec, allocator, source)) {
        if (expected != null) {
          assertEquals(expected, allRows(decoded, allocator), source + " decoded to other rows");
        } else {
          readEveryValue(decoded);
        }
      }
      return Outcome.DECODED;
    } catch (IpcFormatException e) {
      assertTrue(e.getMessage().contains(source), () -> source + ": " + e.getMessage());
      return Outcome.REPORTED;
    } catch (IOException | RuntimeException e) {
      throw new AssertionError(source + ": " + e, e);
    } finally {
      assertEquals(0, allocator.getAllocatedMemory(), () -> source + " leaked");
    }
  }

  /** Reads every value of every batch, which must not go out of bounds. */
  private void readEveryValue(DecodedStream decoded) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      VectorLoader loader = new VectorLoader(root);
      for (ArrowRecordBatch batch : decoded.batches()) {
        loader.load(batch);
        for (FieldVector vector : root.getFieldVectors()) {
          for (int row = 0; row < root.getRowCount(); row++) {
            vector.getObject(row);
          }
        }
      }
    }
  }

  private IpcFormatException expectReported(
      byte[] bytes, StreamCodec codec, String source, String... says) {
    return IpcTestSupport.assertRefused(bytes, codec, allocator, source, says);
  }

  /** One stream of two batches of {@link TestData#allTypes} (8 rows, seed 7). */
  private byte[] twoBatchesOfAllTypes(StreamCodec codec) throws IOException {
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 8, 7)) {
      return IpcTestSupport.encodeBatches(
          root.getSchema(), Arrays.asList(root, root), null, codec, allocator);
    }
  }

  /** The rows of {@link #twoBatchesOfAllTypes}. */
  private List<String> rowsOfTwoBatches() {
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 8, 7)) {
      List<String> rows = rows(root);
      rows.addAll(rows(root));
      return rows;
    }
  }

  /** An uncompressed stream: schema, one record batch, end marker. */
  private byte[] plainStream() throws IOException {
    return IpcTestSupport.streamOf(TestData.buildSide(allocator, 0, 100), StreamCodec.NONE);
  }

  /** Where message {@code index} of an uncompressed stream starts (its continuation token). */
  private static int messageOffset(byte[] stream, int index) {
    int at = 0;
    for (int i = 0; i < index; i++) {
      ByteBuffer prefix = ByteBuffer.wrap(stream, at, 8).order(ByteOrder.LITTLE_ENDIAN);
      assertEquals(MessageSerializer.IPC_CONTINUATION_TOKEN, prefix.getInt());
      int metadataLength = prefix.getInt();
      long body = Message.getRootAsMessage(metadata(stream, i)).bodyLength();
      at += 8 + metadataLength + (int) body;
    }
    return at;
  }

  /** The flatbuffer metadata of message {@code index}, little-endian. */
  private static ByteBuffer metadata(byte[] stream, int index) {
    int at = messageOffset(stream, index);
    int length = ByteBuffer.wrap(stream, at + 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    return ByteBuffer.wrap(stream, at + 8, length).slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /**
   * A copy of {@code stream} whose record batch (message 1) claims a body of {@code length} bytes.
   * The field is found through the flatbuffer's vtable: Message's bodyLength is field 3.
   */
  private static byte[] withBatchBodyLength(byte[] stream, long length) {
    byte[] copy = stream.clone();
    ByteBuffer message = metadata(copy, 1);
    int table = message.getInt(0);
    int vtable = table - message.getInt(table);
    int bodyLengthSlot = 4 + 2 * 3;
    assertTrue(bodyLengthSlot < message.getShort(vtable), "message has no bodyLength field");
    int field = message.getShort(vtable + bodyLengthSlot);
    assertTrue(field != 0, "message has no bodyLength field");
    message.putLong(table + field, length);
    assertEquals(length, Message.getRootAsMessage(metadata(copy, 1)).bodyLength());
    return copy;
  }
}
