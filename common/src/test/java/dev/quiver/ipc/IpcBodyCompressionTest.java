package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.batchRows;
import static dev.quiver.ipc.IpcTestSupport.bodyCompressedStream;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorInputStream;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Arrow IPC body compression (LZ4_FRAME and ZSTD, buffer by buffer): streams Arrow Java writes read
 * to the same values in Quiver as in Arrow Java's own reader; hostile buffer lengths, frames and
 * checksums are refused with nothing allocated for what the bytes do not hold.
 */
class IpcBodyCompressionTest extends AllocatorTestBase {

  private static final Field INTS = Field.nullable("n", new ArrowType.Int(32, true));
  private static final long DICTIONARY_ID = 5;

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#arrowBodyCodecs")
  void everyTypeReadsAsArrowsOwnReaderReadsIt(CompressionUtil.CodecType codec) throws IOException {
    byte[] stream;
    // A small batch, whose buffers Arrow stores uncompressed (-1: compressing would grow them), and
    // a large one, whose buffers it compresses.
    try (VectorSchemaRoot small = TestData.allTypes(allocator, 3, 1);
        VectorSchemaRoot large = TestData.allTypes(allocator, 2000, 2)) {
      stream = write(codec, null, small, large);
    }
    long[] kinds = bufferKinds(stream);
    assertTrue(kinds[0] > 0 && kinds[1] > 0, Arrays.toString(kinds));
    assertSameAsArrow(stream, "all types " + codec);
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#arrowBodyCodecs")
  void dictionaryEncodedColumnsReadAsArrowReadsThem(CompressionUtil.CodecType codec)
      throws IOException {
    Dictionary colors = TestData.colorDictionary(allocator, DICTIONARY_ID);
    byte[] stream;
    try (VectorSchemaRoot a = TestData.dictionaryIndices(allocator, DICTIONARY_ID, 0, 4000);
        VectorSchemaRoot b = TestData.dictionaryIndices(allocator, DICTIONARY_ID, 9, 2)) {
      stream = write(codec, new DictionaryProvider.MapDictionaryProvider(colors), a, b);
    } finally {
      colors.getVector().close();
    }
    assertSameAsArrow(stream, "dictionary " + codec);
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#arrowBodyCodecs")
  void aBufferOfManyFrameBlocksReads(CompressionUtil.CodecType codec) throws IOException {
    // 5 MiB of longs: more than one 4 MiB block of Arrow's LZ4 frames.
    int rows = 5 << 17;
    byte[] stream;
    try (VectorSchemaRoot root =
        VectorSchemaRoot.create(
            new Schema(List.of(Field.nullable("l", new ArrowType.Int(64, true)))), allocator)) {
      BigIntVector longs = (BigIntVector) root.getVector("l");
      longs.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        // Runs of one value: commons-compress's pure-Java LZ4 compressor takes minutes on 5 MiB
        // of values with only short matches.
        longs.set(i, i / 64);
      }
      root.setRowCount(rows);
      stream = write(codec, null, root);
    }
    assertSameAsArrow(stream, "many blocks " + codec);
  }

  @Test
  void lz4FramesWithBlockChecksumsAndContentSizeRead() throws IOException {
    byte[] values = ints(1, 2, 3, 4, 5, 6, 7, 8);
    byte[] frame =
        lz4Frame(
            values,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM,
            LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE,
            LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM);
    byte[] stream = intBatch(CompressionType.LZ4_FRAME, 8, prefixed(values.length, frame));
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "lz4")) {
      assertEquals(
          List.of("1 | ", "2 | ", "3 | ", "4 | ", "5 | ", "6 | ", "7 | ", "8 | "),
          batchRows(decoded, allocator).get(0));
    }
  }

  @Test
  void zstdWithoutAContentSizeReads() throws IOException {
    byte[] values = ints(9, 8, 7);
    byte[] stream = intBatch(CompressionType.ZSTD, 3, prefixed(values.length, zstdStream(values)));
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "zstd")) {
      assertEquals(List.of("9 | ", "8 | ", "7 | "), batchRows(decoded, allocator).get(0));
    }
  }

  @Test
  void anLz4FrameWhoseBlocksReferToEarlierOnesReads() throws IOException {
    // Linked blocks, as liblz4's frame API (Arrow C++) writes by default: the second block's first
    // match copies the first block. Written by hand: commons-compress before 1.26 (Arrow 12's)
    // fails writing them.
    byte[] bytes = linkedFrame(16);
    // A valid frame of 40 bytes, as commons-compress (Arrow Java's lz4 reader) reads it...
    byte[] expected;
    try (FramedLZ4CompressorInputStream in =
        new FramedLZ4CompressorInputStream(new ByteArrayInputStream(bytes))) {
      expected = in.readAllBytes();
    }
    assertEquals(
        "ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOPqrstuvwx",
        new String(expected, StandardCharsets.US_ASCII));
    // ...and as Quiver reads it.
    byte[] stream = intBatch(CompressionType.LZ4_FRAME, 10, prefixed(40, bytes));
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "linked")) {
      List<String> rows = batchRows(decoded, allocator).get(0);
      ByteBuffer ints = ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN);
      for (int r = 0; r < 10; r++) {
        assertEquals(ints.getInt() + " | ", rows.get(r));
      }
    }
    // A match reaching before the frame's first byte is refused, as in one block.
    byte[] before = intBatch(CompressionType.LZ4_FRAME, 10, prefixed(40, linkedFrame(17)));
    assertRefused(before, "before the frame", "buffer 1", "block 1 does not decompress");
  }

  @Test
  void linkedLz4FramesOfManyBlocksReadAsCommonsCompressReadsThem() throws IOException {
    int rows = 1 << 16;
    byte[] period = new byte[5000];
    new Random(7).nextBytes(period);
    byte[] values = new byte[rows * 4];
    for (int i = 0; i < values.length; i++) {
      values[i] = period[i % period.length];
    }
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    try (FramedLZ4CompressorOutputStream out =
        new FramedLZ4CompressorOutputStream(
            frame,
            new FramedLZ4CompressorOutputStream.Parameters(
                FramedLZ4CompressorOutputStream.BlockSize.K64, true, true, true))) {
      out.write(values);
    } catch (IndexOutOfBoundsException e) {
      assumeTrue(false, "commons-compress before 1.26 cannot write linked blocks: " + e);
    }
    byte[] stream =
        intBatch(CompressionType.LZ4_FRAME, rows, prefixed(values.length, frame.toByteArray()));
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "linked")) {
      List<String> read = batchRows(decoded, allocator).get(0);
      ByteBuffer ints = ByteBuffer.wrap(values).order(ByteOrder.LITTLE_ENDIAN);
      for (int r = 0; r < rows; r++) {
        assertEquals(ints.getInt() + " | ", read.get(r), "row " + r);
      }
    }
  }

  /**
   * A linked frame of two blocks: 16 bytes stored, then a block whose first match copies 16 bytes
   * from {@code offset} back (16: the first block; more: before the frame) and 8 literals.
   */
  private static byte[] linkedFrame(int offset) {
    byte[] first = "ABCDEFGHIJKLMNOP".getBytes(StandardCharsets.US_ASCII);
    ByteBuffer frame = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    frame.putInt(Lz4FrameDecoder.MAGIC).put((byte) 0x40).put((byte) 0x40); // linked, 64 KiB
    int descriptorHash = XXHashFactory.safeInstance().hash32().hash(frame.array(), 4, 2, 0);
    frame.put((byte) (descriptorHash >> 8));
    frame.putInt(0x80000000 | first.length).put(first); // stored block
    byte[] second = {
      0x0C,
      (byte) offset,
      0, // no literals, then a 16-byte match
      (byte) 0x80,
      'q',
      'r',
      's',
      't',
      'u',
      'v',
      'w',
      'x' // the last 8 bytes, literals
    };
    frame.putInt(second.length).put(second).putInt(0);
    return Arrays.copyOf(frame.array(), frame.position());
  }

  // Hostile buffers: each names the column and the buffer, and nothing stays allocated.

  @Test
  void aBufferShorterThanItsLengthPrefixIsTruncation() throws IOException {
    byte[] stream = intBatch(CompressionType.LZ4_FRAME, 1, new byte[] {4, 0, 0, 0, 0});
    assertRefused(stream, "short prefix", "column n: its data buffer (buffer 1)", "truncated");
  }

  @Test
  void aTruncatedFrameIsRefused() throws IOException {
    byte[] values = ints(1, 2, 3, 4);
    byte[] frame = lz4Frame(values, LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE);
    byte[] lz4 = prefixed(values.length, Arrays.copyOf(frame, frame.length - 6));
    assertDataBufferRefused(CompressionType.LZ4_FRAME, 4, lz4, "cut lz4", "truncated");
    byte[] zstd = Zstd.compress(values);
    byte[] cut = prefixed(values.length, Arrays.copyOf(zstd, zstd.length - 3));
    assertDataBufferRefused(CompressionType.ZSTD, 4, cut, "cut zstd", "zstd");
  }

  @ParameterizedTest
  @EnumSource(
      value = Codec.class,
      names = {"LZ4_FRAME", "ZSTD"})
  void aHugeDeclaredLengthIsRefusedBeforeAllocating(Codec codec) throws IOException {
    byte[] values = ints(1);
    byte[] data = prefixed(1L << 40, codec.compress(values));
    // Nothing near the claim: the stream itself, and not one byte for the buffer.
    IpcTestSupport.assertRefusedWithin(
        64 << 10,
        intBatch(codec.id, 1, data),
        StreamCodec.NONE,
        allocator,
        "huge " + codec,
        "buffer 1",
        "declares 1099511627776 uncompressed bytes");
  }

  @Test
  void aDeclaredLengthBeyondTheCodecsExpansionIsRefused() throws IOException {
    int rows = 1 << 20;
    byte[] data =
        prefixed(rows * 4L, lz4Frame(ints(1), LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE));
    IpcTestSupport.assertRefusedWithin(
        64 << 10,
        intBatch(CompressionType.LZ4_FRAME, rows, data),
        StreamCodec.NONE,
        allocator,
        "expansion",
        "buffer 1",
        "the codec expands at most 255x");
  }

  @Test
  void negativeLengthsOtherThanStoredAreRefused() throws IOException {
    for (long length : new long[] {-2, Long.MIN_VALUE}) {
      byte[] data =
          prefixed(length, lz4Frame(ints(1), LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE));
      assertDataBufferRefused(
          CompressionType.LZ4_FRAME, 1, data, "negative " + length, "declares " + length);
    }
  }

  @Test
  void badLz4MagicHeaderAndChecksumsAreRefused() throws IOException {
    byte[] values = ints(1, 2, 3, 4);
    byte[] frame =
        lz4Frame(
            values,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
            LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM,
            LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM);
    byte[] magic = frame.clone();
    magic[0] ^= 1;
    assertRefusedLz4(values, magic, "bad magic", "not an LZ4 frame");
    byte[] header = frame.clone();
    header[6] ^= 0x40; // HC, the header checksum
    assertRefusedLz4(values, header, "bad header", "header checksum");
    byte[] block = frame.clone();
    block[block.length - 9] ^= 1; // the first block's checksum, before end mark and content sum
    assertRefusedLz4(values, block, "bad block sum", "block 0 checksum");
    byte[] content = frame.clone();
    content[content.length - 1] ^= 1;
    assertRefusedLz4(values, content, "bad content sum", "content checksum");
    byte[] trailing = Arrays.copyOf(frame, frame.length + 1);
    assertRefusedLz4(values, trailing, "trailing", "ends at byte");
  }

  @Test
  void zstdGarbageIsRefused() throws IOException {
    byte[] values = ints(1, 2, 3, 4);
    byte[] notZstd = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    assertDataBufferRefused(
        CompressionType.ZSTD, 4, prefixed(values.length, notZstd), "not zstd", "not a zstd frame");
    byte[] garbage = Zstd.compress(values);
    for (int i = 6; i < garbage.length; i++) {
      garbage[i] = (byte) 0xA5;
    }
    assertDataBufferRefused(
        CompressionType.ZSTD, 4, prefixed(values.length, garbage), "zstd garbage", "zstd");
  }

  @Test
  void outputOtherThanTheDeclaredLengthIsRefused() throws IOException {
    byte[] values = ints(1, 2);
    // Declared longer than the frame holds (still within the layout's slack).
    byte[] lz4 = lz4Frame(values, LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE);
    assertDataBufferRefused(
        CompressionType.LZ4_FRAME,
        2,
        prefixed(16, lz4),
        "lz4 short",
        "LZ4 frame holds 8 bytes, but the buffer declares 16");
    assertDataBufferRefused(
        CompressionType.ZSTD,
        2,
        prefixed(16, zstdStream(values)),
        "zstd short",
        "zstd decompresses to 8 bytes, but the buffer declares 16");
    assertDataBufferRefused(
        CompressionType.ZSTD,
        2,
        prefixed(16, Zstd.compress(values)),
        "zstd content size",
        "content size 8, but the buffer declares 16");
    // Declared shorter: the frame does not fit.
    assertDataBufferRefused(
        CompressionType.LZ4_FRAME, 1, prefixed(4, lz4), "lz4 long", "bytes left of 4 declared");
    assertDataBufferRefused(
        CompressionType.ZSTD,
        1,
        prefixed(4, zstdStream(values)),
        "zstd long",
        "zstd does not decompress it into the 4 bytes");
  }

  @Test
  void aDeclaredLengthFarBeyondTheLayoutIsRefused() throws IOException {
    byte[] values = new byte[4096];
    byte[] data = prefixed(values.length, Zstd.compress(values));
    assertDataBufferRefused(CompressionType.ZSTD, 1, data, "beyond layout", "the layout uses 4");
  }

  @Test
  void aStoredBufferAndAnEmptyOneRead() throws IOException {
    byte[] values = ints(3, 1, 4);
    byte[] stream =
        new HostileBatch(allocator, INTS, 3)
                .node(3, 0)
                .emptyBuffer()
                .buffer(prefixed(-1, values))
                .flaggedCompressed(CompressionType.ZSTD, BodyCompressionMethod.BUFFER)
                .stream();
    try (DecodedStream decoded = ArrowIpc.decode(stream, StreamCodec.NONE, allocator, "stored")) {
      assertEquals(List.of("3 | ", "1 | ", "4 | "), batchRows(decoded, allocator).get(0));
    }
  }

  /** The codecs, with their flatbuffer ids and a compressor for test bytes. */
  enum Codec {
    LZ4_FRAME(CompressionType.LZ4_FRAME),
    ZSTD(CompressionType.ZSTD);

    final byte id;

    Codec(byte id) {
      this.id = id;
    }

    byte[] compress(byte[] values) throws IOException {
      return this == ZSTD
          ? Zstd.compress(values)
          : lz4Frame(values, LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE);
    }
  }

  private void assertRefusedLz4(byte[] values, byte[] frame, String source, String says)
      throws IOException {
    assertDataBufferRefused(
        CompressionType.LZ4_FRAME, 4, prefixed(values.length, frame), source, says);
  }

  /**
   * Asserts that {@link #intBatch} of {@code rows} and data buffer {@code data}, flagged compressed
   * with {@code codec}, is refused at that buffer (buffer 1), saying {@code says}.
   */
  private void assertDataBufferRefused(
      byte codec, int rows, byte[] data, String source, String says) throws IOException {
    assertRefused(intBatch(codec, rows, data), source, "buffer 1", says);
  }

  private void assertRefused(byte[] stream, String source, String... says) {
    IpcTestSupport.assertRefused(stream, StreamCodec.NONE, allocator, source, says);
  }

  /** A batch of {@code rows} ints without nulls whose data buffer is {@code data} as it is. */
  private byte[] intBatch(byte codec, int rows, byte[] data) throws IOException {
    return new HostileBatch(allocator, INTS, rows)
            .node(rows, 0)
            .emptyBuffer()
            .buffer(data)
            .flaggedCompressed(codec, BodyCompressionMethod.BUFFER)
            .stream();
  }

  /** A compressed buffer: {@code uncompressedLength} little-endian, then {@code data}. */
  private static byte[] prefixed(long uncompressedLength, byte[] data) {
    return ByteBuffer.allocate(8 + data.length)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putLong(uncompressedLength)
        .put(data)
        .array();
  }

  private static byte[] ints(int... values) {
    ByteBuffer bytes = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int value : values) {
      bytes.putInt(value);
    }
    return bytes.array();
  }

  static byte[] lz4Frame(byte[] values, LZ4FrameOutputStream.FLG.Bits... bits) throws IOException {
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    try (LZ4FrameOutputStream out =
        new LZ4FrameOutputStream(
            frame, LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB, values.length, bits)) {
      out.write(values);
    }
    return frame.toByteArray();
  }

  /** A zstd frame written as a stream: no content size in its header. */
  private static byte[] zstdStream(byte[] values) throws IOException {
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    try (ZstdOutputStream out = new ZstdOutputStream(frame)) {
      out.write(values);
    }
    return frame.toByteArray();
  }

  /** {@code roots} (one schema) as Arrow Java writes them with body compression {@code codec}. */
  private byte[] write(
      CompressionUtil.CodecType codec, DictionaryProvider dictionaries, VectorSchemaRoot... roots)
      throws IOException {
    return bodyCompressedStream(allocator, codec, dictionaries, roots);
  }

  private List<List<String>> assertSameAsArrow(byte[] stream, String source) throws IOException {
    return IpcTestSupport.assertSameAsArrow(stream, allocator, source);
  }

  /**
   * How the buffers of {@code stream}'s batches are stored: {stored uncompressed (-1), compressed,
   * empty (no bytes, or declared 0)}.
   */
  private long[] bufferKinds(byte[] stream) throws IOException {
    long[] kinds = new long[3];
    try (ReadChannel in = new ReadChannel(Channels.newChannel(new ByteArrayInputStream(stream)))) {
      MessageMetadataResult message;
      while ((message = MessageSerializer.readMessage(in)) != null) {
        try (ArrowBuf body =
            MessageSerializer.readMessageBody(in, message.getMessageBodyLength(), allocator)) {
          RecordBatch batch;
          byte type = message.getMessage().headerType();
          if (type == MessageHeader.RecordBatch) {
            batch = (RecordBatch) message.getMessage().header(new RecordBatch());
          } else if (type == MessageHeader.DictionaryBatch) {
            batch = ((DictionaryBatch) message.getMessage().header(new DictionaryBatch())).data();
          } else {
            continue;
          }
          for (int i = 0; i < batch.buffersLength(); i++) {
            org.apache.arrow.flatbuf.Buffer buffer = batch.buffers(i);
            if (buffer.length() == 0 || body.getLong(buffer.offset()) == 0) {
              kinds[2]++;
            } else if (body.getLong(buffer.offset()) == -1) {
              kinds[0]++;
            } else {
              kinds[1]++;
            }
          }
        }
      }
    }
    return kinds;
  }
}
