package dev.quiver.testing;

import com.github.luben.zstd.Zstd;
import com.google.flatbuffers.FlatBufferBuilder;
import dev.quiver.ipc.VariadicBufferCounts;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BufferLayout;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.holders.NullableIntervalDayHolder;
import org.apache.arrow.vector.holders.NullableIntervalMonthDayNanoHolder;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * The big-endian twin of a little-endian IPC stream, as a big-endian machine would write the same
 * data: the same messages, the schema flagged {@code Big}, and each buffer's values written
 * big-endian. The values are taken from Arrow Java's vectors, loaded from the little-endian stream
 * by Arrow's own loader, through their typed getters, and written with a big-endian {@link
 * ByteBuffer}; bytes that have no order (validity bitmaps, booleans, strings, binaries) are copied.
 * Nothing here reverses bytes as such: the tests compare Quiver's conversion with this.
 */
public final class BigEndianStreams {

  private BigEndianStreams() {}

  /** The big-endian twin of the uncompressed stream {@code little}, its bodies uncompressed. */
  public static byte[] twin(byte[] little, BufferAllocator allocator) throws IOException {
    return twin(little, allocator, false);
  }

  /**
   * The big-endian twin of the uncompressed stream {@code little}; with {@code zstd}, every
   * non-empty buffer zstd-compressed as Arrow's IPC body compression stores it (an 8-byte
   * little-endian uncompressed length, then the frame), after its values are made big-endian.
   */
  public static byte[] twin(byte[] little, BufferAllocator allocator, boolean zstd)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    WriteChannel out = new WriteChannel(Channels.newChannel(bytes));
    Map<Long, Dictionary> dictionaries = new HashMap<>();
    List<FieldVector> vectors = new ArrayList<>();
    try (ReadChannel in = new ReadChannel(Channels.newChannel(new ByteArrayInputStream(little)))) {
      MessageMetadataResult first = MessageSerializer.readMessage(in);
      Schema schema = MessageSerializer.deserializeSchema(first);
      writeSchema(out, schema);
      List<Field> fields = new ArrayList<>();
      for (Field field : schema.getFields()) {
        Field inMemory = DictionaryUtility.toMemoryFormat(field, allocator, dictionaries);
        fields.add(inMemory);
        vectors.add(inMemory.createVector(allocator));
      }
      VectorSchemaRoot root = new VectorSchemaRoot(fields, vectors, 0);
      MessageMetadataResult message;
      while ((message = MessageSerializer.readMessage(in)) != null) {
        // Arrow's deserializers take the body over: it is released with the batch.
        ArrowBuf body =
            MessageSerializer.readMessageBody(in, message.getMessageBodyLength(), allocator);
        byte type = message.getMessage().headerType();
        if (type == MessageHeader.RecordBatch) {
          try (ArrowRecordBatch batch =
              MessageSerializer.deserializeRecordBatch(message.getMessage(), body)) {
            new VectorLoader(root).load(batch);
            try (ArrowRecordBatch big = bigEndian(batch, vectors, allocator, zstd)) {
              MessageSerializer.serialize(out, big);
            }
          }
        } else if (type == MessageHeader.DictionaryBatch) {
          try (ArrowDictionaryBatch batch =
              MessageSerializer.deserializeDictionaryBatch(message.getMessage(), body)) {
            FieldVector values = dictionaries.get(batch.getDictionaryId()).getVector();
            List<FieldVector> one = Collections.singletonList(values);
            new VectorLoader(new VectorSchemaRoot(List.of(values.getField()), one, 0))
                .load(batch.getDictionary());
            try (ArrowRecordBatch big = bigEndian(batch.getDictionary(), one, allocator, zstd);
                ArrowDictionaryBatch dictionary =
                    new ArrowDictionaryBatch(batch.getDictionaryId(), big, batch.isDelta())) {
              MessageSerializer.serialize(out, dictionary);
            }
          }
        } else {
          body.close();
          throw new IOException("unexpected message type " + type);
        }
      }
    } finally {
      for (FieldVector vector : vectors) {
        vector.close();
      }
      for (Dictionary dictionary : dictionaries.values()) {
        dictionary.getVector().close();
      }
    }
    out.writeIntLittleEndian(MessageSerializer.IPC_CONTINUATION_TOKEN);
    out.writeIntLittleEndian(0);
    return bytes.toByteArray();
  }

  /** The schema message of {@code schema}, its endianness {@code Big}. */
  private static void writeSchema(WriteChannel out, Schema schema) throws IOException {
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int[] fieldOffsets = new int[schema.getFields().size()];
    for (int i = 0; i < fieldOffsets.length; i++) {
      fieldOffsets[i] = schema.getFields().get(i).getField(builder);
    }
    int fields = org.apache.arrow.flatbuf.Schema.createFieldsVector(builder, fieldOffsets);
    List<Integer> pairs = new ArrayList<>();
    if (schema.getCustomMetadata() != null) {
      for (Map.Entry<String, String> e : schema.getCustomMetadata().entrySet()) {
        pairs.add(
            KeyValue.createKeyValue(
                builder, builder.createString(e.getKey()), builder.createString(e.getValue())));
      }
    }
    int metadata =
        org.apache.arrow.flatbuf.Schema.createCustomMetadataVector(
            builder, pairs.stream().mapToInt(Integer::intValue).toArray());
    org.apache.arrow.flatbuf.Schema.startSchema(builder);
    org.apache.arrow.flatbuf.Schema.addEndianness(builder, Endianness.Big);
    org.apache.arrow.flatbuf.Schema.addFields(builder, fields);
    org.apache.arrow.flatbuf.Schema.addCustomMetadata(builder, metadata);
    int root = org.apache.arrow.flatbuf.Schema.endSchema(builder);
    ByteBuffer message =
        MessageSerializer.serializeMessage(builder, MessageHeader.Schema, root, 0, new IpcOption());
    MessageSerializer.writeMessageBuffer(out, message.remaining(), message);
  }

  /**
   * {@code little}'s field nodes with buffers written big-endian from the values of {@code
   * vectors}, which hold {@code little} loaded. The caller closes the result.
   */
  private static ArrowRecordBatch bigEndian(
      ArrowRecordBatch little, List<FieldVector> vectors, BufferAllocator allocator, boolean zstd) {
    List<byte[]> buffers = new ArrayList<>();
    List<ArrowBuf> source = little.getBuffers();
    for (FieldVector vector : vectors) {
      addBuffers(vector, source, buffers);
    }
    if (buffers.size() != source.size()) {
      throw new IllegalStateException(buffers.size() + " buffers written of " + source.size());
    }
    List<ArrowBuf> written = new ArrayList<>();
    try {
      for (byte[] buffer : buffers) {
        byte[] stored = zstd && buffer.length > 0 ? zstdBuffer(buffer) : buffer;
        ArrowBuf arrow = allocator.buffer(Math.max(stored.length, 1));
        arrow.setBytes(0, stored);
        arrow.writerIndex(stored.length);
        written.add(arrow);
      }
      List<Long> variadicCounts = VariadicBufferCounts.of(little);
      if (zstd && !variadicCounts.isEmpty()) {
        throw new IllegalArgumentException("no zstd twin of a batch with view columns here");
      }
      return zstd
          ? new ArrowRecordBatch(
              little.getLength(),
              little.getNodes(),
              written,
              new ArrowBodyCompression(CompressionType.ZSTD, BodyCompressionMethod.BUFFER))
          : VariadicBufferCounts.batch(
              little.getLength(), little.getNodes(), written, variadicCounts);
    } finally {
      // The batch holds its own references.
      for (ArrowBuf buffer : written) {
        buffer.close();
      }
    }
  }

  private static byte[] zstdBuffer(byte[] plain) {
    byte[] frame = Zstd.compress(plain);
    ByteBuffer out = ByteBuffer.allocate(8 + frame.length).order(ByteOrder.LITTLE_ENDIAN);
    out.putLong(plain.length).put(frame);
    return out.array();
  }

  /** Adds the buffers of {@code vector} and its children, as the batch orders them. */
  private static void addBuffers(FieldVector vector, List<ArrowBuf> source, List<byte[]> out) {
    ArrowType type = vector.getField().getType();
    String typeName = type.getTypeID().name();
    if (typeName.equals("Utf8View") || typeName.equals("BinaryView")) {
      addViewBuffers(vector, source, out);
      return;
    }
    for (BufferLayout layout : TypeLayout.getTypeLayout(type).getBufferLayouts()) {
      byte[] bytes = bytesOf(source.get(out.size()));
      ByteBuffer big = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
      if (layout.getType() == BufferLayout.BufferType.OFFSET) {
        writeOffsets(vector, layout.getTypeBitWidth() / 8, big);
      } else if (layout.getType().name().equals("SIZE")) {
        writeSizes(vector, layout.getTypeBitWidth() / 8, big);
      } else if (layout.getType() == BufferLayout.BufferType.DATA) {
        writeValues(vector, big);
      }
      out.add(bytes);
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      addBuffers(child, source, out);
    }
  }

  /**
   * A string or binary view column's buffers: its validity bitmap and data buffers as they are, and
   * each non-null view's length, buffer index and offset (those of a value longer than 12 bytes)
   * big-endian; a null row's view as it is (nothing reads it).
   */
  private static void addViewBuffers(FieldVector vector, List<ArrowBuf> source, List<byte[]> out) {
    List<ArrowBuf> own = vector.getFieldBuffers(); // validity, views, then the data buffers
    out.add(bytesOf(source.get(out.size())));
    byte[] views = bytesOf(source.get(out.size()));
    ByteBuffer big = ByteBuffer.wrap(views).order(ByteOrder.BIG_ENDIAN);
    ArrowBuf loaded = own.get(1);
    for (int i = 0; i < vector.getValueCount(); i++) {
      if (vector.isNull(i)) {
        continue;
      }
      int length = loaded.getInt(i * 16L);
      big.putInt(i * 16, length);
      if (length > 12) {
        big.putInt(i * 16 + 8, loaded.getInt(i * 16L + 8));
        big.putInt(i * 16 + 12, loaded.getInt(i * 16L + 12));
      }
    }
    out.add(views);
    for (int i = 2; i < own.size(); i++) {
      out.add(bytesOf(source.get(out.size())));
    }
  }

  private static byte[] bytesOf(ArrowBuf buffer) {
    byte[] bytes = new byte[(int) buffer.readableBytes()];
    buffer.getBytes(buffer.readerIndex(), bytes);
    return bytes;
  }

  private static void writeOffsets(FieldVector vector, int width, ByteBuffer big) {
    ArrowBuf offsets = vector.getOffsetBuffer();
    long count = Math.min(vector.getValueCount() + 1L, big.capacity() / width);
    for (int i = 0; i < count; i++) {
      if (width == 4) {
        big.putInt(i * 4, offsets.getInt(i * 4L));
      } else {
        big.putLong(i * 8, offsets.getLong(i * 8L));
      }
    }
  }

  /** A list view's sizes, one per value (its third buffer), as {@link #writeOffsets} does. */
  private static void writeSizes(FieldVector vector, int width, ByteBuffer big) {
    ArrowBuf sizes = vector.getFieldBuffers().get(2);
    long count = Math.min(vector.getValueCount(), big.capacity() / width);
    for (int i = 0; i < count; i++) {
      if (width == 4) {
        big.putInt(i * 4, sizes.getInt(i * 4L));
      } else {
        big.putLong(i * 8, sizes.getLong(i * 8L));
      }
    }
  }

  /** Writes each non-null value of a fixed-width vector big-endian; other data stays as it is. */
  private static void writeValues(FieldVector v, ByteBuffer big) {
    ArrowType type = v.getField().getType();
    switch (type.getTypeID()) {
      case Bool:
      case Utf8:
      case LargeUtf8:
      case Binary:
      case LargeBinary:
      case FixedSizeBinary:
        return;
      default:
        break;
    }
    for (int i = 0; i < v.getValueCount(); i++) {
      if (v.isNull(i)) {
        continue;
      }
      if (v instanceof BaseIntVector) {
        long value = ((BaseIntVector) v).getValueAsLong(i);
        int width = ((ArrowType.Int) type).getBitWidth() / 8;
        if (width == 1) {
          big.put(i, (byte) value);
        } else if (width == 2) {
          big.putShort(i * 2, (short) value);
        } else if (width == 4) {
          big.putInt(i * 4, (int) value);
        } else {
          big.putLong(i * 8, value);
        }
      } else if (v instanceof Float4Vector) {
        big.putFloat(i * 4, ((Float4Vector) v).get(i));
      } else if (v instanceof Float8Vector) {
        big.putDouble(i * 8, ((Float8Vector) v).get(i));
      } else if (type instanceof ArrowType.FloatingPoint
          && ((ArrowType.FloatingPoint) type).getPrecision() == FloatingPointPrecision.HALF) {
        // Float2Vector is not in every Arrow this compiles against: its 16 bits, read as a short.
        big.putShort(i * 2, v.getDataBuffer().getShort(i * 2L));
      } else if (v instanceof DecimalVector) {
        putInteger(big, i * 16, 16, ((DecimalVector) v).getObject(i).unscaledValue());
      } else if (v instanceof Decimal256Vector) {
        putInteger(big, i * 32, 32, ((Decimal256Vector) v).getObject(i).unscaledValue());
      } else if (v instanceof DateDayVector) {
        big.putInt(i * 4, ((DateDayVector) v).get(i));
      } else if (v instanceof DateMilliVector) {
        big.putLong(i * 8, ((DateMilliVector) v).get(i));
      } else if (v instanceof TimeSecVector) {
        big.putInt(i * 4, ((TimeSecVector) v).get(i));
      } else if (v instanceof TimeMilliVector) {
        big.putInt(i * 4, ((TimeMilliVector) v).get(i));
      } else if (v instanceof TimeMicroVector) {
        big.putLong(i * 8, ((TimeMicroVector) v).get(i));
      } else if (v instanceof TimeNanoVector) {
        big.putLong(i * 8, ((TimeNanoVector) v).get(i));
      } else if (v instanceof TimeStampVector) {
        big.putLong(i * 8, ((TimeStampVector) v).get(i));
      } else if (v instanceof DurationVector) {
        big.putLong(i * 8, DurationVector.get(v.getDataBuffer(), i));
      } else if (v instanceof IntervalYearVector) {
        big.putInt(i * 4, ((IntervalYearVector) v).get(i));
      } else if (v instanceof IntervalDayVector) {
        NullableIntervalDayHolder h = new NullableIntervalDayHolder();
        ((IntervalDayVector) v).get(i, h);
        big.putInt(i * 8, h.days).putInt(i * 8 + 4, h.milliseconds);
      } else if (v instanceof IntervalMonthDayNanoVector) {
        NullableIntervalMonthDayNanoHolder h = new NullableIntervalMonthDayNanoHolder();
        ((IntervalMonthDayNanoVector) v).get(i, h);
        big.putInt(i * 16, h.months).putInt(i * 16 + 4, h.days).putLong(i * 16 + 8, h.nanoseconds);
      } else {
        throw new IllegalArgumentException("no big-endian writer for " + type);
      }
    }
  }

  /** {@code value} as a two's complement integer of {@code width} bytes, big-endian. */
  private static void putInteger(ByteBuffer big, int at, int width, BigInteger value) {
    byte[] minimal = value.toByteArray();
    byte sign = (byte) (value.signum() < 0 ? 0xff : 0);
    for (int b = 0; b < width; b++) {
      int fromEnd = width - 1 - b;
      big.put(at + b, fromEnd < minimal.length ? minimal[minimal.length - 1 - fromEnd] : sign);
    }
  }
}
