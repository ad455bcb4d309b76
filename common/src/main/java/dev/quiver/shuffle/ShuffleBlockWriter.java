package dev.quiver.shuffle;

import dev.quiver.annotation.Public;
import dev.quiver.ipc.ArrowIpc;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes Arrow batches as shuffle blocks, one block per batch, in the format Comet's native shuffle
 * reads. The stream stays open: the caller owns it. Dictionary-encoded fields are not supported
 * (Comet's blocks carry none).
 */
@Public
public final class ShuffleBlockWriter {

  private final OutputStream out;
  private final BlockCodec codec;
  private long bytesWritten;

  public ShuffleBlockWriter(OutputStream out, BlockCodec codec) {
    this.out = Preconditions.checkNotNull(out, "out");
    this.codec = Preconditions.checkNotNull(codec, "codec");
  }

  /**
   * Writes the current contents of {@code root} as one block.
   *
   * @return the bytes written for this block, header included
   */
  public long write(VectorSchemaRoot root) throws IOException {
    checkNoDictionaries(root.getSchema());
    byte[] body = ArrowIpc.encode(root, new DictionaryProvider.MapDictionaryProvider(), codec);
    return writeBlock(root.getSchema().getFields().size(), body);
  }

  /**
   * Writes {@code batch} (of {@code schema}) as one block; {@code allocator} holds the vectors the
   * batch is loaded into while it is written.
   *
   * @return the bytes written for this block, header included
   */
  public long write(Schema schema, ArrowRecordBatch batch, BufferAllocator allocator)
      throws IOException {
    checkNoDictionaries(schema);
    byte[] body =
        ArrowIpc.encode(
            schema,
            Collections.singletonList(batch),
            new DictionaryProvider.MapDictionaryProvider(),
            codec,
            allocator);
    return writeBlock(schema.getFields().size(), body);
  }

  /** Total bytes this writer has written. */
  public long bytesWritten() {
    return bytesWritten;
  }

  public BlockCodec codec() {
    return codec;
  }

  private long writeBlock(int fieldCount, byte[] body) throws IOException {
    long length = (long) ShuffleBlockFormat.HEADER_BYTES + body.length;
    if (length > ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH) {
      throw new IOException(
          "A "
              + codec
              + " block of "
              + length
              + " bytes exceeds the maximum block length "
              + ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH
              + "; write smaller batches");
    }
    ByteBuffer header =
        ByteBuffer.allocate(ShuffleBlockFormat.LENGTH_FIELD_BYTES + ShuffleBlockFormat.HEADER_BYTES)
            .order(ByteOrder.LITTLE_ENDIAN);
    header.putLong(length).putLong(fieldCount).put(codec.tag());
    out.write(header.array());
    out.write(body);
    long written = ShuffleBlockFormat.LENGTH_FIELD_BYTES + length;
    bytesWritten += written;
    return written;
  }

  private static void checkNoDictionaries(Schema schema) {
    checkNoDictionaries(schema.getFields());
  }

  private static void checkNoDictionaries(List<Field> fields) {
    for (Field field : fields) {
      Preconditions.checkArgument(
          field.getDictionary() == null,
          "field '%s' is dictionary-encoded; shuffle blocks carry none",
          field.getName());
      checkNoDictionaries(field.getChildren());
    }
  }
}
