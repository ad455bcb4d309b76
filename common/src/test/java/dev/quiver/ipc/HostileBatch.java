package dev.quiver.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An uncompressed stream of a schema and one batch whose row count, field nodes and buffers the
 * test states as it likes, however little they agree: what Arrow's writer would not write, for the
 * tests of what the strict reader refuses. The buffers are allocated, written and freed here.
 *
 * <pre>
 * byte[] stream = new HostileBatch(allocator, field, 1 &lt;&lt; 26).node(1 &lt;&lt; 26, 0)
 *     .emptyBuffer().intBuffer(5).stream();
 * </pre>
 */
final class HostileBatch {

  private final BufferAllocator allocator;
  private final Field field;
  private final int rows;
  private ByteBuffer schemaMessage;
  private final List<ArrowFieldNode> nodes = new ArrayList<>();
  private final List<byte[]> buffers = new ArrayList<>();
  private ArrowBodyCompression compression;
  private Long dictionaryId;

  /** A batch of {@code field} claiming {@code rows} rows, its buffers from {@code allocator}. */
  HostileBatch(BufferAllocator allocator, Field field, int rows) {
    this.allocator = allocator;
    this.field = field;
    this.rows = rows;
  }

  /** The schema message as the caller built it, instead of the one of the field. */
  HostileBatch schemaMessage(ByteBuffer metadata) {
    this.schemaMessage = metadata;
    return this;
  }

  /** The next field node: {@code length} values, {@code nullCount} of them null. */
  HostileBatch node(int length, int nullCount) {
    nodes.add(new ArrowFieldNode(length, nullCount));
    return this;
  }

  /** The next buffer: {@code bytes}. */
  HostileBatch buffer(byte[] bytes) {
    buffers.add(bytes);
    return this;
  }

  /** The next buffer: none at all. */
  HostileBatch emptyBuffer() {
    return buffer(new byte[0]);
  }

  /** The next buffer: {@code length} bytes, every bit set. */
  HostileBatch filledBuffer(int length) {
    byte[] ones = new byte[length];
    Arrays.fill(ones, (byte) 0xff);
    return buffer(ones);
  }

  /** The next buffer: little-endian ints. */
  HostileBatch intBuffer(int... values) {
    ByteBuffer ints = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    for (int value : values) {
      ints.putInt(value);
    }
    return buffer(ints.array());
  }

  /** The next two buffers: a one-row int column holding {@code value}, without validity. */
  HostileBatch intColumn(int value) {
    return emptyBuffer().intBuffer(value);
  }

  /** The next three buffers: a one-row Utf8 column holding {@code value}, without validity. */
  HostileBatch utf8Column(String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    return emptyBuffer().intBuffer(0, bytes.length).buffer(bytes);
  }

  /** The body is flagged compressed, lz4 frames buffer by buffer (its buffers are not). */
  HostileBatch flaggedCompressed() {
    return flaggedCompressed(CompressionType.LZ4_FRAME, BodyCompressionMethod.BUFFER);
  }

  /**
   * The body is flagged compressed with {@code codec} and {@code method} ({@code CompressionType},
   * {@code BodyCompressionMethod}); the buffers are written as the test gives them.
   */
  HostileBatch flaggedCompressed(byte codec, byte method) {
    compression = new ArrowBodyCompression(codec, method);
    return this;
  }

  /** The batch is a dictionary batch of dictionary {@code id} instead of a record batch. */
  HostileBatch asDictionary(long id) {
    this.dictionaryId = id;
    return this;
  }

  /** The stream: schema, the batch, end-of-stream marker. */
  byte[] stream() throws IOException {
    List<ArrowBuf> written = new ArrayList<>();
    try {
      for (byte[] bytes : buffers) {
        written.add(arrowBuf(bytes));
      }
      RawStreamWriter out = new RawStreamWriter();
      if (schemaMessage != null) {
        out.metadata(schemaMessage);
      } else {
        out.schema(new Schema(List.of(field)));
      }
      ArrowRecordBatch batch =
          compression == null
              ? new ArrowRecordBatch(rows, nodes, written)
              : new ArrowRecordBatch(rows, nodes, written, compression);
      try (batch) {
        if (dictionaryId == null) {
          out.message(batch);
        } else {
          try (ArrowDictionaryBatch dictionary =
              new ArrowDictionaryBatch(dictionaryId, batch, false)) {
            out.message(dictionary);
          }
        }
      }
      return out.end().toByteArray();
    } finally {
      for (ArrowBuf buffer : written) {
        buffer.close();
      }
    }
  }

  private ArrowBuf arrowBuf(byte[] bytes) {
    if (bytes.length == 0) {
      return allocator.getEmpty();
    }
    ArrowBuf buffer = allocator.buffer(bytes.length);
    buffer.setBytes(0, bytes);
    buffer.writerIndex(bytes.length);
    return buffer;
  }
}
