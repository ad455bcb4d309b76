package dev.quiver.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.function.BiFunction;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;

/**
 * Streams Arrow Java writes with IPC body compression, for the tests and seeds that compare Quiver
 * with Arrow's own reader. Arrow Java writes them from 12.0 on; Spark 3.4's Arrow 11 has no such
 * writer, so there {@link #available()} is false (its constructor is looked up by reflection, so
 * that the tests compile on every profile).
 */
public final class BodyCompressedStreams {

  private static final Constructor<ArrowStreamWriter> WRITER = compressingWriter();

  private BodyCompressedStreams() {}

  /** Whether this Arrow Java writes body-compressed streams. */
  public static boolean available() {
    return WRITER != null;
  }

  /**
   * {@code batches} (one schema) as one stream Arrow Java writes with body compression {@code
   * codec}, copied into a root of {@code allocator} batch by batch.
   *
   * @throws UnsupportedOperationException where this Arrow cannot (see {@link #available()})
   */
  public static byte[] write(
      BufferAllocator allocator,
      CompressionUtil.CodecType codec,
      DictionaryProvider dictionaries,
      VectorSchemaRoot... batches)
      throws IOException {
    if (WRITER == null) {
      throw new UnsupportedOperationException("this Arrow Java writes no body compression");
    }
    return write(allocator, batches, (root, out) -> newWriter(root, dictionaries, out, codec));
  }

  /** The same stream as {@link #write} without body compression: Arrow Java's plain writer. */
  public static byte[] uncompressed(
      BufferAllocator allocator, DictionaryProvider dictionaries, VectorSchemaRoot... batches)
      throws IOException {
    return write(allocator, batches, (root, out) -> new ArrowStreamWriter(root, dictionaries, out));
  }

  private static byte[] write(
      BufferAllocator allocator,
      VectorSchemaRoot[] batches,
      BiFunction<VectorSchemaRoot, ByteArrayOutputStream, ArrowStreamWriter> writerOf)
      throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(batches[0].getSchema(), allocator);
        ArrowStreamWriter writer = writerOf.apply(root, out)) {
      writer.start();
      for (VectorSchemaRoot batch : batches) {
        try (ArrowRecordBatch record = new VectorUnloader(batch).getRecordBatch()) {
          new VectorLoader(root).load(record);
        }
        writer.writeBatch();
      }
      writer.end();
    }
    return out.toByteArray();
  }

  private static ArrowStreamWriter newWriter(
      VectorSchemaRoot root,
      DictionaryProvider dictionaries,
      ByteArrayOutputStream out,
      CompressionUtil.CodecType codec) {
    try {
      return WRITER.newInstance(
          root,
          dictionaries,
          Channels.newChannel(out),
          IpcOption.DEFAULT,
          CommonsCompressionFactory.INSTANCE,
          codec);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("Arrow's writer refused", e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Constructor<ArrowStreamWriter> compressingWriter() {
    try {
      return ArrowStreamWriter.class.getConstructor(
          VectorSchemaRoot.class,
          DictionaryProvider.class,
          WritableByteChannel.class,
          IpcOption.class,
          CompressionCodec.Factory.class,
          CompressionUtil.CodecType.class);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }
}
