package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What the writer writes, both readers read back: every codec, every type, zero columns. */
@ExtendWith(AllocatorExtension.class)
class ShuffleBlockRoundTripTest {

  /** Every block codec, and zstd at a level other than the default. */
  static Stream<BlockCodec> codecs() {
    return Stream.concat(Codecs.blockCodecs().stream(), Stream.of(BlockCodec.zstd(9)));
  }

  /** What one block held when written. */
  private static final class Expected {
    final Schema schema;
    final int rows;
    final List<List<Object>> values;

    Expected(VectorSchemaRoot root) {
      this.schema = root.getSchema();
      this.rows = root.getRowCount();
      this.values = Values.of(root);
    }

    void assertMatches(VectorSchemaRoot root) {
      assertEquals(schema, root.getSchema());
      assertEquals(rows, root.getRowCount());
      assertEquals(values, Values.of(root));
    }
  }

  /** The reader closed its stream and never asked it for {@code available()}. */
  private static void assertClosedWithoutAvailableCalls(CountingInputStream in) {
    assertTrue(in.isClosed());
    assertEquals(0, in.counts().availableCalls());
  }

  @ParameterizedTest
  @MethodSource("codecs")
  void decoderReadsBackEveryBlock(BlockCodec codec, BufferAllocator allocator) throws IOException {
    List<Expected> expected = new ArrayList<>();
    byte[] stream = writeSample(codec, allocator, expected);

    CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(stream));
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator)) {
      List<Integer> starts = Blocks.boundaries(stream);
      for (int i = 0; i < expected.size(); i++) {
        assertTrue(decoder.next(), "block " + i);
        expected.get(i).assertMatches(decoder.root());
        assertArrayEquals(codec.tag(), decoder.codec().tag());
        assertEquals(i, decoder.blockIndex());
        assertEquals((long) starts.get(i), decoder.blockOffset());
      }
      assertFalse(decoder.next(), "the stream ends at a block boundary");
      assertFalse(decoder.next(), "and stays ended");
    }
    assertClosedWithoutAvailableCalls(in);
  }

  @ParameterizedTest
  @MethodSource("codecs")
  void rawBlockIteratorHandsOverEachCompressedBody(BlockCodec codec, BufferAllocator allocator)
      throws IOException {
    List<Expected> expected = new ArrayList<>();
    // One shape: the raw path refuses a block whose field count differs from the first block's.
    byte[] stream = writeSample(codec, allocator, expected, false);

    CountingInputStream in = new CountingInputStream(new ByteArrayInputStream(stream));
    try (RawBlockIterator blocks = new RawBlockIterator(in)) {
      List<Integer> starts = Blocks.boundaries(stream);
      for (int i = 0; i < expected.size(); i++) {
        assertTrue(blocks.next(), "block " + i);
        Expected block = expected.get(i);
        assertEquals(block.schema.getFields().size(), blocks.fieldCount());
        assertArrayEquals(codec.tag(), blocks.codec().tag());
        assertEquals(i, blocks.blockIndex());
        assertEquals((long) starts.get(i), blocks.blockOffset());
        int bodyLength = starts.get(i + 1) - starts.get(i) - 20;
        assertEquals(bodyLength, blocks.bodyLength());
        ByteBuffer body = blocks.body();
        assertTrue(body.isDirect());
        assertEquals(0, body.position());
        assertEquals(bodyLength, body.remaining());
        // Decode the body as a native engine would, to check it is the whole compressed stream.
        byte[] copy = new byte[body.remaining()];
        body.get(copy);
        try (DecodedStream decoded = ArrowIpc.decode(copy, blocks.codec(), allocator, "test");
            VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
          assertEquals(1, decoded.batches().size());
          new VectorLoader(root).load(decoded.batches().get(0));
          block.assertMatches(root);
        }
      }
      assertFalse(blocks.next());
    }
    assertClosedWithoutAvailableCalls(in);
  }

  @ParameterizedTest
  @MethodSource("codecs")
  void writerReportsBytesAndWritesCometsHeader(BlockCodec codec, BufferAllocator allocator)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ShuffleBlockWriter writer = new ShuffleBlockWriter(out, codec);
    long first;
    long second;
    try (VectorSchemaRoot root = TestData.allTypes(allocator, 10, 4)) {
      first = writer.write(root);
      // The batch form writes the same block as the root form.
      try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
        second = writer.write(root.getSchema(), batch, allocator);
      }
    }
    byte[] stream = out.toByteArray();
    assertEquals(stream.length, first + second);
    assertEquals(stream.length, writer.bytesWritten());
    assertEquals(first, second);
    assertArrayEquals(
        Arrays.copyOfRange(stream, 0, (int) first),
        Arrays.copyOfRange(stream, (int) first, stream.length));

    ByteBuffer header = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(first - 8, header.getLong(0), "length of everything after the length field");
    assertEquals(TestData.allTypesSchema().getFields().size(), header.getLong(8));
    assertArrayEquals(codec.tag(), Arrays.copyOfRange(stream, 16, 20));
  }

  /**
   * Writes blocks covering the shapes a shuffle carries: many rows, one row, no rows, no columns
   * (the row count must survive), then many rows again.
   */
  private static byte[] writeSample(
      BlockCodec codec, BufferAllocator allocator, List<Expected> expected) throws IOException {
    return writeSample(codec, allocator, expected, true);
  }

  /** With {@code withZeroColumns}, a zero-column block among the all-types ones. */
  private static byte[] writeSample(
      BlockCodec codec, BufferAllocator allocator, List<Expected> expected, boolean withZeroColumns)
      throws IOException {
    try (VectorSchemaRoot many = TestData.allTypes(allocator, 300, 1);
        VectorSchemaRoot one = TestData.allTypes(allocator, 1, 2);
        VectorSchemaRoot none = TestData.allTypes(allocator, 0, 3);
        VectorSchemaRoot noColumns = TestData.zeroColumns(allocator, 42);
        VectorSchemaRoot more = TestData.allTypes(allocator, 77, 5)) {
      VectorSchemaRoot[] roots =
          withZeroColumns
              ? new VectorSchemaRoot[] {many, one, none, noColumns, more}
              : new VectorSchemaRoot[] {many, one, none, more};
      for (VectorSchemaRoot root : roots) {
        expected.add(new Expected(root));
      }
      return Blocks.write(codec, roots);
    }
  }
}
