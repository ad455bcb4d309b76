package dev.quiver.ipc;

import dev.quiver.io.ChunkedInputChannel;
import dev.quiver.io.ChunkedOutputChannel;
import dev.quiver.io.Closeables;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowMessage;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageChannelReader;
import org.apache.arrow.vector.ipc.message.MessageResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.arrow.vector.util.VectorBatchAppender;
import org.apache.arrow.vector.validate.ValidateVectorBufferVisitor;

/**
 * Decodes and encodes codec-compressed Arrow IPC streams. Reads go through {@link
 * ChunkedInputChannel} (64 KiB pieces, no {@code available()}), writes through {@link
 * ChunkedOutputChannel}.
 */
public final class ArrowIpc {

  private ArrowIpc() {}

  /**
   * Decodes one compressed IPC stream (schema, dictionaries, any number of record batches) into
   * buffers owned by {@code allocator}. Every record batch is checked structurally before it is
   * returned. On failure nothing stays allocated.
   *
   * @param source what is being read, for error messages (e.g. "broadcast 7, stream 2")
   * @throws IpcFormatException for bytes that are not a decodable IPC stream, naming {@code source}
   *     and the batch being read
   * @throws ClosedByInterruptException if the thread was interrupted while reading
   */
  public static DecodedStream decode(
      InputStream compressed, StreamCodec codec, BufferAllocator allocator, String source)
      throws IOException {
    List<ArrowRecordBatch> batches = new ArrayList<>();
    Map<Long, Dictionary> dictionaries = new HashMap<>();
    Schema schema = null;
    ChunkedInputChannel channel = null;
    try {
      channel = new ChunkedInputChannel(codec.decompress(compressed));
      GuardedReadChannel in = new GuardedReadChannel(channel);
      try (StrictStreamReader reader = new StrictStreamReader(in, allocator)) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        schema = root.getSchema();
        VectorUnloader unloader = new VectorUnloader(root);
        while (reader.loadNextBatch()) {
          checkStructure(root);
          batches.add(unloader.getRecordBatch());
        }
        if (in.endedEarly()) {
          // Arrow's reader takes an end of input between messages for the end of the stream.
          throw new IOException("the stream ends without its end-of-stream marker (truncated)");
        }
        for (Map.Entry<Long, Dictionary> e : reader.getDictionaryVectors().entrySet()) {
          dictionaries.put(e.getKey(), detach(e.getValue(), allocator));
        }
      }
      return new DecodedStream(schema, batches, dictionaries);
    } catch (ClosedByInterruptException | InterruptedIOException e) {
      releaseQuietly(batches, dictionaries, e);
      throw e;
    } catch (IOException | RuntimeException e) {
      releaseQuietly(batches, dictionaries, e);
      throw new IpcFormatException(
          String.format(
              "Cannot decode Arrow IPC stream (%s) at record batch %d: %s",
              source, batches.size(), describe(e)),
          e);
    } finally {
      if (channel != null) {
        channel.close();
      }
    }
  }

  /** Decodes a compressed IPC stream held in memory. */
  public static DecodedStream decode(
      byte[] compressed, StreamCodec codec, BufferAllocator allocator, String source)
      throws IOException {
    return decode(new ByteArrayInputStream(compressed), codec, allocator, source);
  }

  /**
   * Writes {@code batches} (all of {@code schema}) as one IPC stream, compressed with {@code
   * codec}, to {@code out}, and closes {@code out}. Dictionary-encoded fields take their
   * dictionaries from {@code dictionaries}. Zero-column batches keep their row count.
   */
  public static void encode(
      Schema schema,
      List<ArrowRecordBatch> batches,
      DictionaryProvider dictionaries,
      StreamCodec codec,
      BufferAllocator allocator,
      OutputStream out)
      throws IOException {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
        ArrowStreamWriter writer =
            new ArrowStreamWriter(
                root, dictionaries, new ChunkedOutputChannel(codec.compress(out)))) {
      VectorLoader loader = new VectorLoader(root);
      writer.start();
      for (ArrowRecordBatch batch : batches) {
        loader.load(batch);
        writer.writeBatch();
      }
      writer.end();
    }
  }

  /** {@link #encode} into a byte array. */
  public static byte[] encode(
      Schema schema,
      List<ArrowRecordBatch> batches,
      DictionaryProvider dictionaries,
      StreamCodec codec,
      BufferAllocator allocator)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    encode(schema, batches, dictionaries, codec, allocator, bytes);
    return bytes.toByteArray();
  }

  /** Encodes the current contents of {@code root} as a one-batch stream. */
  public static byte[] encode(
      VectorSchemaRoot root, DictionaryProvider dictionaries, StreamCodec codec)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ArrowStreamWriter writer =
        new ArrowStreamWriter(
            root, dictionaries, new ChunkedOutputChannel(codec.compress(bytes)))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    return bytes.toByteArray();
  }

  /**
   * Checks that every vector of a loaded batch has buffers large enough for its values and offsets
   * that stay inside their data, so that reading any value of a decoded batch cannot go out of
   * bounds. (The column lengths were checked before loading.) Not {@code
   * ValueVectorUtility.validate}: its type check rejects every map column (MapVector is checked as
   * a List), and the vectors here were made from the schema anyway.
   */
  private static void checkStructure(VectorSchemaRoot root) {
    ValidateVectorBufferVisitor buffers = new ValidateVectorBufferVisitor();
    for (FieldVector vector : root.getFieldVectors()) {
      // Checks sizes, and that the last offset lies inside the data, but not the offsets between.
      vector.accept(buffers, null);
      checkOffsets(vector);
    }
  }

  /** Checks that the offsets of {@code vector} and its children start at 0 or more and ascend. */
  private static void checkOffsets(FieldVector vector) {
    int width;
    if (vector instanceof BaseVariableWidthVector || vector instanceof ListVector) {
      width = 4;
    } else if (vector instanceof BaseLargeVariableWidthVector
        || vector instanceof LargeListVector) {
      width = 8;
    } else {
      width = 0;
    }
    if (width > 0 && vector.getValueCount() > 0) {
      ArrowBuf offsets = vector.getOffsetBuffer();
      long previous = 0;
      for (int i = 0; i <= vector.getValueCount(); i++) {
        long offset = width == 4 ? offsets.getInt((long) i * 4) : offsets.getLong((long) i * 8);
        if (offset < previous) {
          throw new IllegalArgumentException(
              String.format(
                  "column %s: offset %d is %d, below %d",
                  vector.getField().getName(), i, offset, previous));
        }
        previous = offset;
      }
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      checkOffsets(child);
    }
  }

  /**
   * Moves a dictionary's vector out of the reader (which closes its own) into {@code allocator}.
   */
  private static Dictionary detach(Dictionary dictionary, BufferAllocator allocator) {
    FieldVector vector = dictionary.getVector();
    TransferPair transfer = vector.getTransferPair(allocator);
    transfer.transfer();
    return new Dictionary((FieldVector) transfer.getTo(), dictionary.getEncoding());
  }

  private static void releaseQuietly(
      List<ArrowRecordBatch> batches, Map<Long, Dictionary> dictionaries, Exception failure) {
    List<AutoCloseable> owned = new ArrayList<>(batches);
    for (Dictionary d : dictionaries.values()) {
      owned.add(d.getVector());
    }
    Closeables.closeAll(owned, failure);
    batches.clear();
    dictionaries.clear();
  }

  static String describe(Throwable e) {
    if (e instanceof OutOfMemoryException) {
      return "a message claims more memory than the decode may use (" + e.getMessage() + ")";
    }
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  /**
   * Arrow's stream reader with its message loop redone so that nothing leaks on bad input, and
   * refusing a dictionary batch that replaces (rather than extends) a dictionary already used by a
   * record batch: the batches decoded before it would silently point at the new values.
   *
   * <p>Arrow's own loop leaks a message's body buffer when the message's metadata does not fit its
   * body, when a message has an unexpected type, and when a dictionary batch names a dictionary the
   * schema does not have.
   */
  private static final class StrictStreamReader extends ArrowStreamReader {
    private final MessageChannelReader messages;

    /** Dictionary id to whether a record batch has been read since it was loaded. */
    private final Map<Long, Boolean> dictionaryUsed = new HashMap<>();

    StrictStreamReader(ReadChannel in, BufferAllocator allocator) {
      this(new MessageChannelReader(in, allocator), allocator);
    }

    private StrictStreamReader(MessageChannelReader messages, BufferAllocator allocator) {
      super(messages, allocator);
      this.messages = messages;
    }

    @Override
    protected Schema readSchema() throws IOException {
      MessageResult result = messages.readNext();
      if (result == null) {
        throw new IOException("the input ends before the schema message");
      }
      try {
        byte type = result.getMessage().headerType();
        if (type != MessageHeader.Schema) {
          throw new IOException("expected the schema message first, found message type " + type);
        }
        return MessageSerializer.deserializeSchema(result.getMessage());
      } finally {
        closeBody(result);
      }
    }

    @Override
    public boolean loadNextBatch() throws IOException {
      prepareLoadNextBatch();
      while (true) {
        MessageResult result = messages.readNext();
        if (result == null) {
          return false;
        }
        ArrowMessage message = deserialize(result);
        if (message instanceof ArrowRecordBatch) {
          ArrowRecordBatch batch = (ArrowRecordBatch) message;
          checkBeforeLoading(batch);
          loadRecordBatch(batch);
          checkDictionariesLoaded();
          dictionaryUsed.replaceAll((id, used) -> Boolean.TRUE);
          return true;
        }
        loadDictionary((ArrowDictionaryBatch) message);
      }
    }

    /** A record or dictionary batch made from {@code result}; on failure its body is released. */
    private ArrowMessage deserialize(MessageResult result) throws IOException {
      try {
        Message message = result.getMessage();
        byte type = message.headerType();
        if (type == MessageHeader.RecordBatch) {
          return MessageSerializer.deserializeRecordBatch(message, body(result));
        } else if (type == MessageHeader.DictionaryBatch) {
          return MessageSerializer.deserializeDictionaryBatch(message, body(result));
        }
        throw new IOException("expected a record or dictionary batch, found message type " + type);
      } catch (IOException | RuntimeException e) {
        // Arrow's deserializers release the body only when they succeed.
        closeBody(result);
        throw e;
      }
    }

    /**
     * Checks what Arrow's loader would otherwise paper over by growing vectors (allocating and
     * zeroing memory for rows and elements the stream does not hold): each column's length must be
     * the batch's, and no list's last offset may pass its elements' length. On failure the batch is
     * closed.
     */
    private void checkBeforeLoading(ArrowRecordBatch batch) throws IOException {
      try {
        List<ArrowFieldNode> nodes = batch.getNodes();
        List<FieldVector> columns = getVectorSchemaRoot().getFieldVectors();
        int node = 0;
        for (FieldVector vector : columns) {
          if (node >= nodes.size() || nodes.get(node).getLength() != batch.getLength()) {
            throw new IOException(
                String.format(
                    "column %s has %s values in a batch of %d rows",
                    vector.getField().getName(),
                    node < nodes.size() ? nodes.get(node).getLength() : "no",
                    batch.getLength()));
          }
          node += nodeCount(vector);
        }
        int[] cursor = new int[2]; // the next field node, the next buffer
        for (FieldVector vector : columns) {
          if (!checkListEnds(vector, batch, cursor)) {
            break;
          }
        }
      } catch (IOException | RuntimeException e) {
        batch.close();
        throw e;
      }
    }

    /**
     * Checks the last offset of {@code vector} and its descendants if they are lists, advancing
     * {@code cursor} past their field nodes and buffers. Returns false, and the walk must stop, at
     * a type whose buffer count the layout does not fix (the view types of newer Arrow).
     */
    private static boolean checkListEnds(FieldVector vector, ArrowRecordBatch batch, int[] cursor)
        throws IOException {
      ArrowType type = vector.getField().getType();
      if (type.getTypeID().name().endsWith("View")) {
        return false;
      }
      List<ArrowFieldNode> nodes = batch.getNodes();
      List<ArrowBuf> buffers = batch.getBuffers();
      int node = cursor[0]++;
      int firstBuffer = cursor[1];
      cursor[1] += TypeLayout.getTypeBufferCount(type);
      if (node >= nodes.size() || cursor[1] > buffers.size()) {
        throw new IOException("the batch has fewer field nodes or buffers than its schema needs");
      }
      int width = vector instanceof ListVector ? 4 : vector instanceof LargeListVector ? 8 : 0;
      long length = nodes.get(node).getLength();
      if (width > 0 && length > 0) {
        ArrowBuf offsets = buffers.get(firstBuffer + 1);
        if (offsets.capacity() < (length + 1) * width) {
          throw new IOException(
              String.format(
                  "list column %s: %d offsets do not fit in %d bytes",
                  vector.getField().getName(), length + 1, offsets.capacity()));
        }
        long end = width == 4 ? offsets.getInt(length * 4) : offsets.getLong(length * 8);
        int elements = cursor[0];
        if (elements >= nodes.size() || end < 0 || end > nodes.get(elements).getLength()) {
          throw new IOException(
              String.format(
                  "list column %s ends at element %d, past its %s elements",
                  vector.getField().getName(),
                  end,
                  elements < nodes.size() ? nodes.get(elements).getLength() : "missing"));
        }
      }
      for (FieldVector child : vector.getChildrenFromFields()) {
        if (!checkListEnds(child, batch, cursor)) {
          return false;
        }
      }
      return true;
    }

    /** How many field nodes a batch holds for {@code vector}: its own and its descendants'. */
    private static int nodeCount(FieldVector vector) {
      int count = 1;
      for (FieldVector child : vector.getChildrenFromFields()) {
        count += nodeCount(child);
      }
      return count;
    }

    /** The message's body; Arrow's deserializers release it once they have sliced it. */
    private ArrowBuf body(MessageResult result) {
      ArrowBuf body = result.getBodyBuffer();
      return body == null ? allocator.getEmpty() : body;
    }

    private static void closeBody(MessageResult result) {
      if (result.getBodyBuffer() != null) {
        result.getBodyBuffer().close();
      }
    }

    private void checkDictionariesLoaded() throws IOException {
      for (FieldVector vector : getVectorSchemaRoot().getFieldVectors()) {
        DictionaryEncoding encoding = vector.getField().getDictionary();
        if (encoding != null
            && !dictionaryUsed.containsKey(encoding.getId())
            && vector.getNullCount() < vector.getValueCount()) {
          throw new IOException(
              "column "
                  + vector.getField().getName()
                  + " uses dictionary "
                  + encoding.getId()
                  + " before any dictionary batch defines it");
        }
      }
    }

    @Override
    protected void loadDictionary(ArrowDictionaryBatch dictionaryBatch) {
      long id = dictionaryBatch.getDictionaryId();
      Dictionary dictionary = dictionaries.get(id);
      String refused = null;
      if (dictionary == null) {
        refused = "dictionary " + id + " is not in the schema";
      } else if (!dictionaryBatch.isDelta() && dictionaryUsed.getOrDefault(id, false)) {
        refused = "dictionary " + id + " is replaced after record batches used it; not supported";
      }
      if (refused != null) {
        dictionaryBatch.close();
        throw new IllegalArgumentException(refused);
      }
      dictionaryUsed.putIfAbsent(id, Boolean.FALSE);
      if (dictionaryBatch.isDelta()) {
        appendDelta(dictionary.getVector(), dictionaryBatch);
      } else {
        super.loadDictionary(dictionaryBatch);
      }
    }

    /**
     * Appends a delta batch's values to its dictionary. Done here because Arrow's reader before
     * 15.0 loads a delta as a replacement.
     */
    private void appendDelta(FieldVector target, ArrowDictionaryBatch delta) {
      try (FieldVector values = target.getField().createVector(allocator)) {
        VectorSchemaRoot holder =
            new VectorSchemaRoot(
                Collections.singletonList(values.getField()), Collections.singletonList(values), 0);
        new VectorLoader(holder).load(delta.getDictionary());
        VectorBatchAppender.batchAppend(target, values);
      } finally {
        delta.close();
      }
    }
  }

  /**
   * Arrow's read channel, refusing hostile lengths before Arrow allocates for them, and noting
   * whether the input ended before a read was filled. Arrow reads a message as a 4-byte length
   * prefix (after the continuation token), then that many bytes of flatbuffer metadata into a heap
   * array, then the body the metadata claims into a buffer from the decode's allocator.
   */
  private static final class GuardedReadChannel extends ReadChannel {
    /**
     * Far above any real message's metadata (a schema of 100,000 columns is a few MiB), far below
     * what a hostile or corrupt length (up to 2 GiB) would make Arrow allocate on the heap.
     */
    static final int MAX_METADATA_LENGTH = 64 << 20;

    /** Arrow cannot load a record batch whose body is over 2 GiB; its allocator would still try. */
    static final long MAX_BODY_LENGTH = Integer.MAX_VALUE;

    /** The metadata length just read, so the next read is that metadata; or -1. */
    private int metadataLength = -1;

    private boolean endedEarly;

    GuardedReadChannel(ReadableByteChannel in) {
      super(in);
    }

    boolean endedEarly() {
      return endedEarly;
    }

    @Override
    public int readFully(ByteBuffer buffer) throws IOException {
      int start = buffer.position();
      int wanted = buffer.remaining();
      int read = super.readFully(buffer);
      if (read < wanted) {
        endedEarly = true;
      } else if (metadataLength >= 0 && wanted == metadataLength) {
        metadataLength = -1;
        checkBodyLength(buffer, start, wanted);
      } else if (wanted == 4) {
        int value = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(start);
        if (value > MAX_METADATA_LENGTH) {
          throw new IOException(
              String.format(
                  "a message claims %d bytes of metadata, more than the %d allowed",
                  value, MAX_METADATA_LENGTH));
        }
        // -1 is the continuation token, 0 the end marker; both are followed by no metadata.
        metadataLength = value > 0 ? value : -1;
      }
      return read;
    }

    private static void checkBodyLength(ByteBuffer buffer, int start, int length)
        throws IOException {
      ByteBuffer metadata = buffer.duplicate();
      metadata.position(start);
      metadata.limit(start + length);
      long body = Message.getRootAsMessage(metadata.slice()).bodyLength();
      if (body < 0 || body > MAX_BODY_LENGTH) {
        throw new IOException(
            String.format(
                "a message claims a body of %d bytes (at most %d can be read)",
                body, MAX_BODY_LENGTH));
      }
    }

    @Override
    public long readFully(ArrowBuf buffer, long length) throws IOException {
      long read = super.readFully(buffer, length);
      if (read < length) {
        endedEarly = true;
      }
      return read;
    }
  }
}
