package dev.quiver.ipc;

import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.Codecs;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.util.Collections;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes an uncompressed IPC stream one message at a time, so that tests can build streams that
 * Arrow's stream writer would not write (dictionary replacements, deltas, no end marker).
 */
final class RawStreamWriter {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final WriteChannel out = new WriteChannel(Channels.newChannel(bytes));

  /**
   * Writes the schema message. Dictionary-encoded fields must be in IPC form: the field's type is
   * the dictionary's value type, not the index type Arrow Java's vectors use.
   */
  RawStreamWriter schema(Schema schema) throws IOException {
    MessageSerializer.serialize(out, schema);
    return this;
  }

  /** Writes a dictionary batch holding {@code values} (which stay the caller's). */
  RawStreamWriter dictionary(long id, FieldVector values, boolean delta) throws IOException {
    VectorSchemaRoot holder = new VectorSchemaRoot(Collections.singletonList(values));
    ArrowRecordBatch data = new VectorUnloader(holder).getRecordBatch();
    try (ArrowDictionaryBatch batch = new ArrowDictionaryBatch(id, data, delta)) {
      MessageSerializer.serialize(out, batch);
    }
    return this;
  }

  /** Writes the current contents of {@code root} as a record batch. */
  RawStreamWriter batch(VectorSchemaRoot root) throws IOException {
    try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
      MessageSerializer.serialize(out, batch);
    }
    return this;
  }

  /** Writes {@code batch} as it is (it stays the caller's): lengths and buffers unchecked. */
  RawStreamWriter message(ArrowRecordBatch batch) throws IOException {
    MessageSerializer.serialize(out, batch);
    return this;
  }

  /** Writes {@code batch} as it is (it stays the caller's). */
  RawStreamWriter message(ArrowDictionaryBatch batch) throws IOException {
    MessageSerializer.serialize(out, batch);
    return this;
  }

  /** Writes a message whose flatbuffer metadata the caller built, with no body. */
  RawStreamWriter metadata(ByteBuffer metadata) throws IOException {
    MessageSerializer.writeMessageBuffer(out, metadata.remaining(), metadata);
    return this;
  }

  /** Writes raw bytes, e.g. a hand-made length prefix. */
  RawStreamWriter bytes(byte[] raw) throws IOException {
    out.write(raw);
    return this;
  }

  /** Writes the end-of-stream marker: a continuation token and a zero length. */
  RawStreamWriter end() throws IOException {
    out.writeIntLittleEndian(MessageSerializer.IPC_CONTINUATION_TOKEN);
    out.writeIntLittleEndian(0);
    return this;
  }

  /** The bytes written so far. */
  byte[] toByteArray() {
    return bytes.toByteArray();
  }

  /** The bytes written so far, compressed with {@code codec}. */
  byte[] compressed(StreamCodec codec) throws IOException {
    return Codecs.compress(codec, toByteArray());
  }
}
