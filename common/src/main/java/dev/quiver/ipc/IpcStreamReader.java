package dev.quiver.ipc;

import dev.quiver.ipc.IpcMessageReader.IpcMessage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.flatbuf.Union;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.MetadataVersion;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;
import org.apache.arrow.vector.util.VectorBatchAppender;
import org.apache.arrow.vector.validate.MetadataV4UnionChecker;

/**
 * The strict reader of one Arrow IPC stream: a schema, then dictionary and record batches, then the
 * end-of-stream marker, and nothing after it. Stricter than Arrow's own reader wherever Arrow would
 * leak, allocate for bytes that do not exist, crash, or return wrong values:
 *
 * <ul>
 *   <li>the end-of-stream marker is required (the format makes it optional; without it a stream cut
 *       between messages would read as a shorter stream);
 *   <li>big-endian streams are converted to little-endian by {@link BigEndianConversion} before the
 *       batch checks (Arrow Java reads their values byte-swapped, silently);
 *   <li>only the types Quiver reads are accepted; a union's type ids and a run-end encoded field's
 *       children are checked before Arrow makes vectors;
 *   <li>every record and dictionary batch is checked by {@link BatchChecks} before and after it is
 *       loaded, and dictionary indices must lie inside their dictionary;
 *   <li>a dictionary may not be replaced once a record batch used it (the batches before would
 *       silently point at the new values); delta batches are appended (Arrow before 15 replaced
 *       them);
 *   <li>Arrow IPC body compression (codec LZ4_FRAME or ZSTD, method BUFFER) is decoded by {@link
 *       BodyDecompressor}, each buffer's declared length bounded by its layout and its compressed
 *       bytes before anything is allocated for it; other codecs and methods are refused by name.
 * </ul>
 *
 * <p>Nothing stays allocated when reading fails.
 */
final class IpcStreamReader implements AutoCloseable {

  /**
   * Arrow type ids Quiver reads: every type Spark maps to Arrow, the large variants, unions,
   * run-end encoding and the view types.
   */
  private static final Set<String> SUPPORTED_TYPES =
      new HashSet<>(
          Arrays.asList(
              "Null",
              "Struct",
              "List",
              "LargeList",
              "FixedSizeList",
              "Map",
              "Int",
              "FloatingPoint",
              "Utf8",
              "LargeUtf8",
              "Binary",
              "LargeBinary",
              "FixedSizeBinary",
              "Bool",
              "Decimal",
              "Date",
              "Time",
              "Timestamp",
              "Interval",
              "Duration",
              "Union",
              // Arrow 11 and 12 parse neither run-end encoding nor the view types: their schema
              // is refused as one that does not parse.
              "RunEndEncoded",
              "Utf8View",
              "BinaryView",
              "ListView",
              "LargeListView"));

  /** The nesting depth Arrow C++'s IPC reader allows too. */
  static final int MAX_NESTING_DEPTH = 64;

  private final IpcMessageReader messages;
  private final BufferAllocator allocator;

  /** The schema as the stream states it (a dictionary-encoded field has its value type). */
  private Schema schema;

  private VectorSchemaRoot root;
  private VectorLoader loader;
  private VectorUnloader unloader;
  private final Map<Long, Dictionary> dictionaries = new HashMap<>();
  private final List<ArrowRecordBatch> batches = new ArrayList<>();

  /** Dictionary id to whether a record batch has been read since it was loaded. */
  private final Map<Long, Boolean> dictionaryUsed = new HashMap<>();

  /** Whether the schema declares big-endian byte order: every batch is then converted. */
  private boolean bigEndian;

  IpcStreamReader(IpcMessageReader messages, BufferAllocator allocator) {
    this.messages = messages;
    this.allocator = allocator;
  }

  /** Record batches read so far. */
  int batchesRead() {
    return batches.size();
  }

  /**
   * Reads the whole stream. The result owns the batches and dictionaries; on failure nothing stays
   * allocated (once this reader is closed).
   */
  DecodedStream read() throws IOException {
    readSchema();
    IpcMessage message;
    while ((message = messages.next()) != null) {
      try (IpcMessage m = message) {
        byte type = m.metadata.headerType();
        if (type == MessageHeader.RecordBatch) {
          readRecordBatch(m);
        } else if (type == MessageHeader.DictionaryBatch) {
          readDictionaryBatch(m);
        } else {
          throw new IpcFormatException(m.describe() + ": a second schema message");
        }
      }
    }
    messages.expectEnd();
    DecodedStream decoded =
        new DecodedStream(root.getSchema(), batches, new HashMap<>(dictionaries));
    batches.clear();
    dictionaries.clear();
    return decoded;
  }

  private void readSchema() throws IOException {
    IpcMessage message = messages.next();
    if (message == null) {
      throw new IpcFormatException("the stream ends (end-of-stream marker) before its schema");
    }
    try (IpcMessage m = message) {
      if (m.metadata.headerType() != MessageHeader.Schema) {
        throw new IpcFormatException(
            m.describe()
                + ": expected the schema message first, found message type "
                + m.metadata.headerType());
      }
      if (m.body.capacity() != 0) {
        throw new IpcFormatException(m.describe() + ": the schema message has a body");
      }
      Schema read;
      try {
        org.apache.arrow.flatbuf.Schema flat =
            (org.apache.arrow.flatbuf.Schema)
                m.metadata.header(new org.apache.arrow.flatbuf.Schema());
        if (flat == null) {
          throw new IpcFormatException(m.describe() + ": the schema message has no schema");
        }
        checkNesting(flat, m.metadata.getByteBuffer().capacity());
        // Arrow Java's schema ignores the flag: it is read here.
        bigEndian = flat.endianness() == Endianness.Big;
        read = MessageSerializer.deserializeSchema(m.metadata);
      } catch (IpcFormatException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new IpcFormatException(m.describe() + ": the schema does not parse", e);
      }
      // Arrow's own reader refuses unions in V4 metadata this way; its message says why.
      MetadataV4UnionChecker.checkRead(read, MetadataVersion.fromFlatbufID(m.metadata.version()));
      Map<Long, ArrowType> dictionaryTypes = new HashMap<>();
      for (Field field : read.getFields()) {
        checkSupported(field, dictionaryTypes);
      }
      if (bigEndian) {
        BigEndianConversion.checkConvertible(read.getFields());
      }
      schema = read;
    }
    List<Field> fields = new ArrayList<>();
    List<FieldVector> vectors = new ArrayList<>();
    try {
      for (Field field : schema.getFields()) {
        Field inMemory = DictionaryUtility.toMemoryFormat(field, allocator, dictionaries);
        fields.add(inMemory);
        vectors.add(inMemory.createVector(allocator));
      }
    } catch (RuntimeException e) {
      // Arrow refuses what it cannot make (an integer of 4128 bits) with runtime exceptions.
      IpcFormatException refused =
          new IpcFormatException("the schema's vectors cannot be made: " + ArrowIpc.describe(e), e);
      AutoCloseables.close(refused, vectors);
      throw refused;
    }
    root = new VectorSchemaRoot(new Schema(fields, schema.getCustomMetadata()), vectors, 0);
    loader = new VectorLoader(root);
    unloader = new VectorUnloader(root);
  }

  /**
   * Refuses a schema nested deeper than {@link #MAX_NESTING_DEPTH} or with more fields than its
   * metadata can hold, before Arrow converts it: Arrow's conversion recurses through the children
   * with no limit, and a flatbuffer whose fields nest through shared or self-referring child tables
   * would recurse until the stack overflows. Refuses too a union claiming more type ids than its
   * metadata can hold: Arrow makes an {@code int[]} of the claimed count before reading any (a 1.5
   * KB stream once asked for 4.5 GB of heap).
   */
  private static void checkNesting(org.apache.arrow.flatbuf.Schema flat, int metadataBytes)
      throws IpcFormatException {
    // Every field table takes well over 4 bytes of the metadata; more visits means shared tables.
    long[] budget = {metadataBytes / 4 + 1};
    for (int i = 0; i < flat.fieldsLength(); i++) {
      checkNesting(flat.fields(i), 1, budget, metadataBytes);
    }
  }

  private static void checkNesting(
      org.apache.arrow.flatbuf.Field field, int depth, long[] budget, int metadataBytes)
      throws IpcFormatException {
    if (depth > MAX_NESTING_DEPTH) {
      throw new IpcFormatException(
          "the schema nests fields deeper than " + MAX_NESTING_DEPTH + " levels");
    }
    if (--budget[0] < 0) {
      throw new IpcFormatException(
          "the schema has more fields than its metadata can hold (child tables shared or cyclic)");
    }
    if (field.typeType() == Type.Union) {
      Union union = (Union) field.type(new Union());
      // 4 bytes a type id: a count beyond the metadata's size is garbage.
      if (union != null && union.typeIdsLength() > metadataBytes / 4) {
        throw new IpcFormatException(
            String.format(
                "a union field claims %d type ids in %d bytes of metadata",
                union.typeIdsLength(), metadataBytes));
      }
    }
    for (int i = 0; i < field.childrenLength(); i++) {
      checkNesting(field.children(i), depth + 1, budget, metadataBytes);
    }
  }

  /**
   * Refuses a type Quiver does not read, naming it, and two dictionary-encoded fields that share an
   * id with different value types (the second would silently read the first's values).
   */
  private static void checkSupported(Field field, Map<Long, ArrowType> dictionaryTypes)
      throws IpcFormatException {
    ArrowType type = field.getType();
    String id = type.getTypeID().name();
    if (!SUPPORTED_TYPES.contains(id)) {
      throw new IpcFormatException(
          String.format(
              "column %s has type %s, which Quiver does not read (see docs/reliability.md)",
              field.getName(), type));
    }
    if (id.equals("Union")) {
      BatchChecks.checkUnionDeclaration(field);
    } else if (id.equals("RunEndEncoded")) {
      BatchChecks.checkRunEndDeclaration(field);
    }
    if (id.equals("Struct") || id.equals("Union")) {
      BatchChecks.checkChildNames(field);
    }
    DictionaryEncoding encoding = field.getDictionary();
    if (encoding != null) {
      ArrowType previous = dictionaryTypes.putIfAbsent(encoding.getId(), type);
      if (previous != null && !previous.equals(type)) {
        throw new IpcFormatException(
            String.format(
                "columns share dictionary %d with different value types %s and %s",
                encoding.getId(), previous, type));
      }
    }
    for (Field child : field.getChildren()) {
      checkSupported(child, dictionaryTypes);
    }
  }

  private void readRecordBatch(IpcMessage m) throws IOException {
    try {
      RecordBatch flat = header(m, new RecordBatch());
      List<Field> fields = root.getSchema().getFields();
      ArrowRecordBatch batch = toBatch(flat, m.body);
      long bodyLength = m.body.capacity();
      if (isCompressed(flat)) {
        batch = decompress(flat, batch, fields);
        bodyLength = BodyDecompressor.plainLength(batch);
      }
      if (bigEndian) {
        batch = toLittleEndian(fields, batch, bodyLength);
      }
      try {
        BatchChecks.checkLayout(fields, batch, bodyLength);
        load(loader, batch);
      } finally {
        batch.close();
      }
      LoadedBatchChecks.checkLoaded(root.getFieldVectors());
      checkDictionaryIndices(root.getFieldVectors());
    } catch (IpcFormatException e) {
      throw e.within(m.describe() + " (record batch " + batches.size() + ")");
    }
    dictionaryUsed.replaceAll((id, used) -> Boolean.TRUE);
    batches.add(unloader.getRecordBatch());
  }

  private void readDictionaryBatch(IpcMessage m) throws IOException {
    String what = m.describe() + " (dictionary batch)";
    try {
      DictionaryBatch flat = header(m, new DictionaryBatch());
      long id;
      boolean delta;
      RecordBatch data;
      try {
        id = flat.id();
        delta = flat.isDelta();
        data = flat.data();
      } catch (RuntimeException e) {
        throw new IpcFormatException("the metadata does not parse", e);
      }
      what = m.describe() + " (dictionary " + id + ")";
      if (data == null) {
        throw new IpcFormatException("no record batch holds the dictionary's values");
      }
      Dictionary dictionary = dictionaries.get(id);
      if (dictionary == null) {
        throw new IpcFormatException("dictionary " + id + " is not in the schema");
      }
      if (!delta && dictionaryUsed.getOrDefault(id, false)) {
        throw new IpcFormatException(
            "dictionary " + id + " is replaced after record batches used it; not supported");
      }
      ArrowRecordBatch read = toBatch(data, m.body);
      long bodyLength = m.body.capacity();
      if (isCompressed(data)) {
        read = decompress(data, read, Collections.singletonList(dictionary.getVector().getField()));
        bodyLength = BodyDecompressor.plainLength(read);
      }
      if (bigEndian) {
        read =
            toLittleEndian(
                Collections.singletonList(dictionary.getVector().getField()), read, bodyLength);
      }
      try (ArrowRecordBatch batch = read) {
        if (delta) {
          appendDelta(dictionary.getVector(), batch, bodyLength);
        } else {
          loadChecked(dictionary.getVector(), batch, bodyLength);
        }
      }
      dictionaryUsed.putIfAbsent(id, Boolean.FALSE);
    } catch (IpcFormatException e) {
      throw e.within(what);
    }
  }

  /** Checks {@code batch} for {@code vector}, loads it, and checks what it loaded. */
  private static void loadChecked(FieldVector vector, ArrowRecordBatch batch, long bodyLength)
      throws IpcFormatException {
    BatchChecks.checkLayout(Collections.singletonList(vector.getField()), batch, bodyLength);
    load(new VectorLoader(single(vector)), batch);
    LoadedBatchChecks.checkLoaded(Collections.singletonList(vector));
  }

  /**
   * Appends a delta batch's values to its dictionary. Done here because Arrow's reader before 15.0
   * loads a delta as a replacement.
   *
   * <p>The dictionary and the delta are appended into a fresh vector, which replaces the
   * dictionary's buffers only once both are in. Arrow's append grows its target from the target's
   * buffer capacities, and a loaded dictionary's buffers are as long as the stream made them (the
   * format allows a buffer longer than its values need): a 46-byte validity bitmap of 3 values made
   * Arrow copy it into the 8-byte bitmap it had just allocated, throw, and lose that allocation.
   * The fresh vector's buffers are Arrow's own; the dictionary and the delta are only read, within
   * their checked values. On failure the fresh vector is closed and the dictionary is as it was.
   */
  private void appendDelta(FieldVector target, ArrowRecordBatch delta, long bodyLength)
      throws IpcFormatException {
    try (FieldVector values = target.getField().createVector(allocator)) {
      loadChecked(values, delta, bodyLength);
      if (values.getValueCount() == 0) {
        return;
      }
      try (FieldVector combined = target.getField().createVector(allocator)) {
        try {
          combined.setInitialCapacity(
              Math.addExact(target.getValueCount(), values.getValueCount()));
          combined.allocateNew();
          VectorBatchAppender.batchAppend(combined, target, values);
        } catch (OutOfMemoryException e) {
          throw e;
        } catch (RuntimeException e) {
          throw new IpcFormatException(
              String.format(
                  "the delta's %d values do not append to the dictionary's %d: %s",
                  values.getValueCount(), target.getValueCount(), ArrowIpc.describe(e)),
              e);
        }
        // The dictionary's own buffers are released; it takes the fresh vector's.
        combined.makeTransferPair(target).transfer();
      }
    }
  }

  private static VectorSchemaRoot single(FieldVector vector) {
    return new VectorSchemaRoot(
        Collections.singletonList(vector.getField()), Collections.singletonList(vector), 0);
  }

  /** Loads a checked batch, turning what Arrow's loader throws on bad input into ours. */
  private static void load(VectorLoader loader, ArrowRecordBatch batch) throws IpcFormatException {
    try {
      loader.load(batch);
    } catch (OutOfMemoryException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IpcFormatException("the batch does not load: " + ArrowIpc.describe(e), e);
    }
  }

  private void checkDictionaryIndices(List<FieldVector> vectors) throws IpcFormatException {
    for (FieldVector vector : vectors) {
      DictionaryEncoding encoding = vector.getField().getDictionary();
      if (encoding != null) {
        Dictionary dictionary = dictionaries.get(encoding.getId());
        int size = dictionary.getVector().getValueCount();
        if (!dictionaryUsed.containsKey(encoding.getId())
            && vector.getNullCount() < vector.getValueCount()) {
          throw new IpcFormatException(
              "column "
                  + vector.getField().getName()
                  + " uses dictionary "
                  + encoding.getId()
                  + " before any dictionary batch defines it");
        }
        LoadedBatchChecks.checkIndices(vector, encoding.getId(), size);
      }
      checkDictionaryIndices(vector.getChildrenFromFields());
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends com.google.flatbuffers.Table> T header(IpcMessage m, T table)
      throws IpcFormatException {
    T header;
    try {
      header = (T) m.metadata.header(table);
    } catch (RuntimeException e) {
      throw new IpcFormatException("the metadata does not parse", e);
    }
    if (header == null) {
      throw new IpcFormatException("the message has no header");
    }
    return header;
  }

  /** Whether the batch's buffers are compressed one by one (checked by {@link #toBatch}). */
  private static boolean isCompressed(RecordBatch flat) {
    return flat.compression() != null;
  }

  /**
   * The batch {@code compressed} holds, its buffers decompressed; {@code compressed} is closed.
   * Taken only for batches with a {@code BodyCompression}: the plain read stays as it was.
   */
  private ArrowRecordBatch decompress(
      RecordBatch flat, ArrowRecordBatch compressed, List<Field> fields) throws IpcFormatException {
    try (compressed) {
      return BodyDecompressor.decompress(
          flat.compression().codec(), fields, compressed, bigEndian, allocator);
    }
  }

  /**
   * The batch {@code bigEndian} holds, its values in little-endian order; {@code bigEndian} is
   * closed. Taken only for streams whose schema declares big-endian: the little-endian read stays
   * as it was.
   */
  private ArrowRecordBatch toLittleEndian(
      List<Field> fields, ArrowRecordBatch bigEndian, long bodyLength) throws IpcFormatException {
    try (bigEndian) {
      return BigEndianConversion.toLittleEndian(fields, bigEndian, bodyLength, allocator);
    }
  }

  /**
   * The batch {@code flat} describes, its buffers sliced from the message body. Every length and
   * offset is checked against the body before a buffer is made.
   */
  private static ArrowRecordBatch toBatch(RecordBatch flat, ArrowBuf body)
      throws IpcFormatException {
    long bodyLength = body.capacity();
    List<ArrowFieldNode> nodes = new ArrayList<>();
    List<ArrowBuf> buffers = new ArrayList<>();
    long rows;
    List<Long> variadicCounts;
    try {
      BodyCompression compression = flat.compression();
      if (compression != null) {
        BodyDecompressor.checkSupported(compression.codec(), compression.method());
      }
      rows = flat.length();
      int nodeCount = flat.nodesLength();
      int bufferCount = flat.buffersLength();
      // 16 bytes a node or buffer: a count beyond the metadata's size is garbage.
      if (nodeCount < 0 || bufferCount < 0 || (nodeCount + (long) bufferCount) * 16 > 64L << 20) {
        throw new IpcFormatException(
            "the batch claims " + nodeCount + " field nodes and " + bufferCount + " buffers");
      }
      FieldNode node = new FieldNode();
      for (int i = 0; i < nodeCount; i++) {
        flat.nodes(node, i);
        if (node.length() < 0
            || node.length() > Integer.MAX_VALUE
            || node.nullCount() < 0
            || node.nullCount() > node.length()) {
          throw new IpcFormatException(
              String.format(
                  "field node %d has %d values and %d nulls", i, node.length(), node.nullCount()));
        }
        nodes.add(new ArrowFieldNode(node.length(), node.nullCount()));
      }
      Buffer buffer = new Buffer();
      for (int i = 0; i < bufferCount; i++) {
        flat.buffers(buffer, i);
        long offset = buffer.offset();
        long length = buffer.length();
        if (offset < 0 || length < 0 || offset > bodyLength || length > bodyLength - offset) {
          throw new IpcFormatException(
              String.format(
                  "buffer %d claims bytes %d to %d of a %d-byte body",
                  i, offset, offset + length, bodyLength));
        }
      }
      variadicCounts = VariadicBufferCounts.read(flat, bufferCount);
    } catch (IpcFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IpcFormatException("the metadata does not parse", e);
    }
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new IpcFormatException("the batch claims " + rows + " rows");
    }
    Buffer buffer = new Buffer();
    for (int i = 0; i < flat.buffersLength(); i++) {
      flat.buffers(buffer, i);
      buffers.add(body.slice(buffer.offset(), buffer.length()));
    }
    // The batch takes its own reference on each slice; the body's is released with its message.
    return VariadicBufferCounts.batch((int) rows, nodes, buffers, variadicCounts);
  }

  /**
   * Releases what this reader still holds: the root, and batches and dictionaries not handed out.
   */
  @Override
  public void close() {
    List<AutoCloseable> held = new ArrayList<>();
    held.add(root);
    held.addAll(batches);
    for (Dictionary dictionary : dictionaries.values()) {
      held.add(dictionary.getVector());
    }
    batches.clear();
    dictionaries.clear();
    AutoCloseables.closeNoChecked(AutoCloseables.all(held));
  }
}
