package dev.quiver.ipc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Arrow IPC body compression (a batch's {@code BodyCompression}, method {@code BUFFER}): turns a
 * batch whose buffers are compressed one by one into the same batch with plain buffers, which the
 * strict reader then checks and loads as it does any other. Each compressed buffer is
 *
 * <pre>
 * int64 LE   the uncompressed length; -1: the rest is stored uncompressed
 * ...        an LZ4 frame ({@link Lz4FrameDecoder}) or a zstd frame ({@link ZstdFrameDecoder})
 * </pre>
 *
 * <p>and a buffer of no bytes is an empty buffer. Before anything is allocated for a buffer, its
 * declared length is checked against three bounds, so that a hostile length is refused rather than
 * allocated: what the schema's layout can use for its field node (the validity bitmap, offsets or
 * fixed-width values of its length, variable-width values up to its last offset; see {@link
 * #LAYOUT_SLACK}), what the compressed bytes can expand to ({@link Lz4FrameDecoder#MAX_EXPANSION},
 * {@link ZstdFrameDecoder#MAX_EXPANSION}), and, over the whole batch, the largest body the reader
 * reads ({@link IpcMessageReader#MAX_BODY_LENGTH}). A buffer smaller than its layout needs is left
 * to {@link BatchChecks#checkLayout}, which runs on the result. The output must be exactly the
 * declared length.
 */
final class BodyDecompressor {

  /** The bytes before a compressed buffer's data: its uncompressed length. */
  static final int LENGTH_PREFIX = 8;

  /** The uncompressed length that says the buffer's bytes are stored as they are. */
  static final long STORED_UNCOMPRESSED = -1;

  /**
   * How far a declared length may exceed what the layout uses: up to the next multiple of 64 bytes
   * and 64 more. Writers pad buffers to 8 or 64 bytes (Arrow's alignment); anything larger holds
   * bytes no value reads.
   */
  static final long LAYOUT_SLACK = 64;

  private final byte codec;

  /** Whether the offsets (read to bound the values after them) are big-endian. */
  private final boolean bigEndian;

  private final BufferAllocator allocator;
  private final List<ArrowFieldNode> nodes;
  private final List<ArrowBuf> compressed;
  private final List<ArrowBuf> plain = new ArrayList<>();
  private final List<Long> variadicCounts;
  private int node;
  private int variadic;
  private long plainBytes;

  private BodyDecompressor(
      byte codec, boolean bigEndian, BufferAllocator allocator, ArrowRecordBatch batch) {
    this.codec = codec;
    this.bigEndian = bigEndian;
    this.allocator = allocator;
    this.nodes = batch.getNodes();
    this.compressed = batch.getBuffers();
    this.variadicCounts = VariadicBufferCounts.of(batch);
  }

  /**
   * Refuses a compression this reader does not decode: a codec other than LZ4 frame or zstd, or a
   * method other than buffer by buffer.
   */
  static void checkSupported(byte codec, byte method) throws IpcFormatException {
    if (method != BodyCompressionMethod.BUFFER) {
      throw new IpcFormatException(
          "the batch uses body compression method " + method + "; Quiver reads BUFFER (0) only");
    }
    if (codec != CompressionType.LZ4_FRAME && codec != CompressionType.ZSTD) {
      throw new IpcFormatException(
          "the batch uses body compression codec "
              + codec
              + "; Quiver reads LZ4_FRAME (0) and ZSTD (1)");
    }
  }

  /**
   * The batch {@code batch} holds, its buffers decompressed into {@code allocator}'s memory (or
   * sliced, where stored uncompressed). The caller closes both batches.
   *
   * @param fields the vectors the batch will be loaded into, in memory format
   * @param bigEndian whether the buffers' values are big-endian (the schema says so); they stay so
   * @throws IpcFormatException naming the column and buffer, with nothing left allocated
   */
  static ArrowRecordBatch decompress(
      byte codec,
      List<Field> fields,
      ArrowRecordBatch batch,
      boolean bigEndian,
      BufferAllocator allocator)
      throws IpcFormatException {
    BodyDecompressor decompressor = new BodyDecompressor(codec, bigEndian, allocator, batch);
    try {
      for (Field field : fields) {
        decompressor.field(field);
      }
      if (decompressor.node != decompressor.nodes.size()
          || decompressor.plain.size() != decompressor.compressed.size()) {
        throw new IpcFormatException(
            String.format(
                "the batch has %d field nodes and %d buffers; its schema has %d and %d",
                decompressor.nodes.size(),
                decompressor.compressed.size(),
                decompressor.node,
                decompressor.plain.size()));
      }
      // The batch takes its own reference on each buffer; ours are released below, as they are
      // when decompressing fails.
      return VariadicBufferCounts.batch(
          batch.getLength(), batch.getNodes(), decompressor.plain, VariadicBufferCounts.of(batch));
    } finally {
      AutoCloseables.closeNoChecked(AutoCloseables.all(decompressor.plain));
    }
  }

  /** Decompresses the buffers of {@code field} and its children, in the schema's order. */
  private void field(Field field) throws IpcFormatException {
    if (node >= nodes.size()) {
      throw new IpcFormatException(
          "the batch has no field node for column " + field.getName() + " (fewer than its schema)");
    }
    long length = nodes.get(node++).getLength();
    List<BufferLayout> layouts = BatchChecks.bufferLayouts(field);
    long lastOffset = -1;
    for (BufferLayout layout : layouts) {
      int index = nextBuffer(field, "its schema");
      BufferLayout.BufferType kind = layout.getType();
      long uses;
      String name;
      if (kind == BufferLayout.BufferType.VALIDITY) {
        name = "validity bitmap";
        uses = (length + 7) / 8;
      } else if (kind == BufferLayout.BufferType.OFFSET) {
        name = "offsets";
        uses = (length + 1) * (layout.getTypeBitWidth() / 8);
      } else if (kind == BufferLayout.BufferType.TYPE) {
        // A union's type ids: one byte a value (Arrow Java's layout says 32 bits).
        name = "type ids";
        uses = length;
      } else if (kind == BufferLayout.BufferType.DATA) {
        name = "data";
        uses = lastOffset >= 0 ? lastOffset : BatchChecks.fixedWidthBytes(field, layout, length);
      } else if (kind.name().equals("VIEWS")) { // by name: Arrow 11 has no views
        name = "views";
        uses = length * BatchChecks.VIEW_BYTES;
      } else if (kind.name().equals("SIZE")) {
        name = "sizes";
        uses = length * (layout.getTypeBitWidth() / 8);
      } else {
        throw new IpcFormatException(
            "column " + field.getName() + " has a " + kind + " buffer, which Quiver does not read");
      }
      ArrowBuf buffer = buffer(field, name, index, uses);
      plain.add(buffer);
      if (kind == BufferLayout.BufferType.OFFSET) {
        lastOffset = lastOffset(buffer, length, layout.getTypeBitWidth() / 8, bigEndian);
      }
    }
    if (BatchChecks.isStringView(field)) {
      variadicBuffers(field, length, plain.get(plain.size() - 1));
    }
    for (Field child : field.getChildren()) {
      field(child);
    }
  }

  /**
   * Decompresses a view column's variadic data buffers, each bounded by the furthest byte a view
   * (decompressed before them) points at in it.
   */
  private void variadicBuffers(Field field, long length, ArrowBuf views) throws IpcFormatException {
    if (variadic >= variadicCounts.size()) {
      throw new IpcFormatException(
          "the batch has no variadic buffer count for column " + field.getName());
    }
    long count = variadicCounts.get(variadic++);
    long[] uses = new long[(int) Math.min(count, compressed.size())];
    long readable = Math.min(length, views.capacity() / BatchChecks.VIEW_BYTES);
    for (long i = 0; i < readable; i++) {
      long at = i * BatchChecks.VIEW_BYTES;
      int valueLength = views.getInt(at);
      int buffer = views.getInt(at + 8);
      if (valueLength > BatchChecks.INLINE_VIEW_BYTES && buffer >= 0 && buffer < uses.length) {
        uses[buffer] =
            Math.max(uses[buffer], (long) Math.max(views.getInt(at + 12), 0) + valueLength);
      }
    }
    for (int b = 0; b < count; b++) {
      int index = nextBuffer(field, "its variadic buffer count");
      plain.add(buffer(field, "variadic data " + b, index, uses[b]));
    }
  }

  /**
   * The index of the next buffer to decompress, for a buffer of {@code field}; refused where the
   * batch has no more (fewer than {@code expectedBy} asks for).
   */
  private int nextBuffer(Field field, String expectedBy) throws IpcFormatException {
    int index = plain.size();
    if (index >= compressed.size()) {
      throw new IpcFormatException(
          "the batch has too few buffers for column "
              + field.getName()
              + " (fewer than "
              + expectedBy
              + ")");
    }
    return index;
  }

  /**
   * The offset that ends the values, where the offsets are there to say it; 0 where they are not
   * (the data buffer may then hold nothing, and the layout check refuses the offsets).
   */
  private static long lastOffset(ArrowBuf offsets, long length, int width, boolean bigEndian) {
    if (offsets.capacity() < (length + 1) * width) {
      return 0;
    }
    long last;
    if (width == 4) {
      int read = offsets.getInt(length * 4);
      last = bigEndian ? Integer.reverseBytes(read) : read;
    } else {
      long read = offsets.getLong(length * 8);
      last = bigEndian ? Long.reverseBytes(read) : read;
    }
    return Math.max(last, 0);
  }

  /** Buffer {@code index} of the batch, as it is uncompressed; the caller owns it. */
  private ArrowBuf buffer(Field field, String name, int index, long uses)
      throws IpcFormatException {
    ArrowBuf stored = compressed.get(index);
    long storedLength = stored.capacity();
    if (storedLength == 0) {
      return retained(stored);
    }
    String what =
        String.format("column %s: its %s buffer (buffer %d)", field.getName(), name, index);
    if (storedLength < LENGTH_PREFIX) {
      throw new IpcFormatException(
          String.format(
              "%s has %d bytes, too few for its %d-byte uncompressed length (truncated)",
              what, storedLength, LENGTH_PREFIX));
    }
    long declared = stored.nioBuffer(0, LENGTH_PREFIX).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    long dataLength = storedLength - LENGTH_PREFIX;
    if (declared == STORED_UNCOMPRESSED) {
      return retained(stored.slice(LENGTH_PREFIX, dataLength));
    }
    if (declared == 0) {
      return allocator.getEmpty();
    }
    long expansion =
        codec == CompressionType.ZSTD
            ? ZstdFrameDecoder.MAX_EXPANSION
            : Lz4FrameDecoder.MAX_EXPANSION;
    long layoutBound = roundUp(uses) + LAYOUT_SLACK;
    long bound = Math.min(layoutBound, dataLength * expansion);
    if (declared < 0 || declared > bound) {
      throw new IpcFormatException(
          String.format(
              "%s declares %d uncompressed bytes from %d compressed; at most %d allowed (the"
                  + " layout uses %d, the codec expands at most %dx)",
              what, declared, dataLength, bound, uses, expansion));
    }
    if (declared > IpcMessageReader.MAX_BODY_LENGTH - plainBytes) {
      throw new IpcFormatException(
          String.format(
              "%s declares %d uncompressed bytes, which takes the batch past %d bytes",
              what, declared, IpcMessageReader.MAX_BODY_LENGTH));
    }
    plainBytes += declared;
    ArrowBuf out = allocator.buffer(declared);
    try {
      ByteBuffer in = stored.nioBuffer(LENGTH_PREFIX, (int) dataLength);
      ByteBuffer target = out.nioBuffer(0, (int) declared);
      if (codec == CompressionType.ZSTD) {
        ZstdFrameDecoder.decode(in, target);
      } else {
        Lz4FrameDecoder.decode(in, target);
      }
      ArrowBuf exact = out.slice(0, declared);
      exact.getReferenceManager().retain();
      return exact;
    } catch (IpcFormatException e) {
      throw e.within(what);
    } finally {
      out.close();
    }
  }

  /** The bytes of {@code batch}'s buffers: the body it would have had uncompressed. */
  static long plainLength(ArrowRecordBatch batch) {
    long total = 0;
    for (ArrowBuf buffer : batch.getBuffers()) {
      total += buffer.capacity();
    }
    return total;
  }

  /** {@code buffer} with a reference of the caller's own. */
  private static ArrowBuf retained(ArrowBuf buffer) {
    buffer.getReferenceManager().retain();
    return buffer;
  }

  private static long roundUp(long bytes) {
    // Far above any real buffer; keeps a hostile last offset from overflowing.
    long capped = Math.min(bytes, 1L << 62);
    return (capped + LAYOUT_SLACK - 1) / LAYOUT_SLACK * LAYOUT_SLACK;
  }
}
