package dev.quiver.ipc;

import dev.quiver.annotation.Public;
import dev.quiver.codec.StreamCodec;
import dev.quiver.io.ArrayInputStream;
import dev.quiver.io.BufferReadable;
import dev.quiver.io.PiecewiseInputChannel;
import dev.quiver.io.PiecewiseOutputChannel;
import dev.quiver.io.PiecewiseReads;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xerial.snappy.SnappyError;

/**
 * Decodes and encodes codec-compressed Arrow IPC streams. Reads go through {@link
 * PiecewiseInputChannel} (64 KiB pieces, no {@code available()}) into {@link IpcStreamReader}, the
 * strict reader (see there for what it refuses); writes go through {@link PiecewiseOutputChannel}.
 *
 * <p>Logs each decoded stream at TRACE. A refused stream is not logged here: the exception goes to
 * the caller (the broadcast cache, the shuffle reader), which knows what the stream belongs to and
 * logs the refusal once.
 */
@Public
public final class ArrowIpc {

  private static final Logger LOG = LoggerFactory.getLogger(ArrowIpc.class);

  /**
   * How much of a length that a message claims is allocated before any of those bytes have arrived,
   * when the stream's own length is not known (a decompressing stream). Past it, a body is read in
   * pieces: a lying length costs at most about twice the bytes that really arrive plus this, never
   * the length it claims. A stream whose length is known is checked against it instead, before
   * anything is allocated.
   */
  public static final int UNREAD_CLAIM_BYTES = 1 << 20;

  /**
   * When the compressed input's length is known, a claimed length up to this many times that length
   * is also allocated before it arrives: Arrow data rarely expands more when decompressed, and a
   * body that fits is read without the extra copy that reading in pieces costs.
   */
  public static final int TRUSTED_EXPANSION = 4;

  private ArrowIpc() {}

  /**
   * Decodes one compressed IPC stream (schema, dictionaries, any number of record batches, the
   * end-of-stream marker) into buffers owned by {@code allocator}. Every batch is checked
   * structurally before it is returned. On failure nothing stays allocated.
   *
   * @param compressedLength the number of bytes {@code compressed} holds, or -1 if unknown: for an
   *     identity codec the stream must then be consumed exactly; for others it bounds what is
   *     allocated ahead of the bytes (see {@link #TRUSTED_EXPANSION})
   * @param source what is being read, for error messages (e.g. "broadcast 7, stream 2")
   * @throws IpcFormatException for bytes that are not a decodable IPC stream, naming {@code source}
   *     and the message and batch being read; its cause is what Arrow, the codec or the JDK threw
   * @throws ClosedByInterruptException if the thread was interrupted while reading
   */
  public static DecodedStream decode(
      InputStream compressed,
      long compressedLength,
      StreamCodec codec,
      BufferAllocator allocator,
      String source)
      throws IOException {
    long start = System.nanoTime();
    PiecewiseInputChannel channel = null;
    IpcStreamReader reader = null;
    try {
      channel = new PiecewiseInputChannel(new CodecFailures(codec.decompress(compressed), codec));
      boolean exact = compressedLength >= 0 && codec.isIdentity();
      long trusted = compressedLength < 0 ? 0 : TRUSTED_EXPANSION * compressedLength;
      IpcMessageReader messages =
          new IpcMessageReader(channel, allocator, exact ? compressedLength : -1, trusted);
      reader = new IpcStreamReader(messages, allocator);
      DecodedStream decoded = reader.read();
      if (LOG.isTraceEnabled()) {
        LOG.trace(
            "Decoded Arrow IPC stream ({}) in {} ms: {} decompressed bytes, {} rows in {} record"
                + " batch(es)",
            source,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
            messages.position(),
            decoded.rowCount(),
            decoded.batches().size());
      }
      return decoded;
    } catch (ClosedByInterruptException | InterruptedIOException e) {
      throw e;
    } catch (IOException | OutOfMemoryException e) {
      throw new IpcFormatException(
          String.format(
              "Cannot decode Arrow IPC stream (%s) at record batch %d: %s",
              source, reader == null ? 0 : reader.batchesRead(), describe(e)),
          e);
    } finally {
      if (reader != null) {
        reader.close();
      }
      if (channel != null) {
        channel.close();
      }
    }
  }

  /** Decodes a compressed IPC stream whose length is not known. */
  public static DecodedStream decode(
      InputStream compressed, StreamCodec codec, BufferAllocator allocator, String source)
      throws IOException {
    return decode(compressed, -1, codec, allocator, source);
  }

  /** Decodes a compressed IPC stream held in memory, which must hold exactly one stream. */
  public static DecodedStream decode(
      byte[] compressed, StreamCodec codec, BufferAllocator allocator, String source)
      throws IOException {
    return decode(new ArrayInputStream(compressed), compressed.length, codec, allocator, source);
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
                root, dictionaries, new PiecewiseOutputChannel(codec.compress(out)))) {
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
            root, dictionaries, new PiecewiseOutputChannel(codec.compress(bytes)))) {
      writer.start();
      writer.writeBatch();
      writer.end();
    }
    return bytes.toByteArray();
  }

  static String describe(Throwable e) {
    if (e instanceof OutOfMemoryException) {
      return "a message claims more memory than the decode may use (" + e.getMessage() + ")";
    }
    if (e instanceof IpcFormatException) {
      return e.getMessage();
    }
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  /**
   * A decompressing stream whose runtime exceptions (which codecs throw on some corrupt input, e.g.
   * lz4-java's {@code LZ4Exception}) become I/O errors naming the codec: caused by the bytes, not
   * by a bug of Quiver's. Reads into a direct buffer reach a decompressor that writes into one
   * itself.
   */
  private static final class CodecFailures extends FilterInputStream implements BufferReadable {
    private final StreamCodec codec;

    CodecFailures(InputStream in, StreamCodec codec) {
      super(in);
      this.codec = codec;
    }

    @Override
    public int read() throws IOException {
      try {
        return in.read();
      } catch (RuntimeException | SnappyError e) {
        throw failed(e);
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        return in.read(b, off, len);
      } catch (RuntimeException | SnappyError e) {
        throw failed(e);
      }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      try {
        return PiecewiseReads.readPiece(in, dst);
      } catch (RuntimeException | SnappyError e) {
        throw failed(e);
      }
    }

    private IOException failed(Throwable e) {
      return new IOException("the " + codec + " codec cannot decompress the input: " + e, e);
    }
  }
}
