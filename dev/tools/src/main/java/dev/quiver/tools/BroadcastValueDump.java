package dev.quiver.tools;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.ipc.IpcFormatException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryEncoder;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Dumps a broadcast value: one Arrow IPC stream compressed with a Spark codec, decoded through
 * Quiver's {@link ArrowIpc#decode}.
 */
final class BroadcastValueDump {

  private final Path file;
  private final SparkStreamCodec codec;
  private final BufferAllocator allocator;
  private final Report report;

  BroadcastValueDump(Path file, SparkStreamCodec codec, BufferAllocator allocator, Report report) {
    this.file = file;
    this.codec = codec;
    this.allocator = allocator;
    this.report = report;
  }

  /** Dumps the value; returns its row count. */
  long run() throws IOException {
    long size = Files.size(file);
    DecodedStream stream;
    try (CountingInputStream in = new CountingInputStream(Files.newInputStream(file))) {
      try {
        stream = ArrowIpc.decode(in, codec, allocator, "broadcast value " + file.getFileName());
      } catch (IpcFormatException e) {
        throw new IpcFormatException(
            e.getMessage()
                + String.format(
                    " [the %s decoder had read %d of the file's %d bytes]", codec, in.count, size),
            e);
      }
    }
    try (DecodedStream decoded = stream) {
      report.line(
          "broadcast value %s: %d bytes, codec %s (%s): one Arrow IPC stream",
          file, size, codec, SparkFraming.of(codec).description());
      report.schema(decoded.schema(), "stream");
      List<ArrowRecordBatch> batches = decoded.batches();
      for (int b = 0; b < batches.size(); b++) {
        ArrowRecordBatch batch = batches.get(b);
        report.line(
            "batch %d: %d rows, %d bytes of buffers",
            b, batch.getLength(), batch.computeBodyLength());
        if (report.wantsRows()) {
          rows(decoded, batch);
        }
      }
      report.line(
          "dictionaries: %s",
          decoded.hasDictionaries() ? decoded.getDictionaryIds().toString() : "none");
      report.line(
          "total: %d %s, %d rows",
          batches.size(), batches.size() == 1 ? "batch" : "batches", decoded.rowCount());
      return decoded.rowCount();
    }
  }

  /** Writes one batch's rows, dictionary-encoded columns decoded to their values. */
  private void rows(DecodedStream decoded, ArrowRecordBatch batch) {
    List<ValueVector> decodedColumns = new ArrayList<>();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(decoded.schema(), allocator)) {
      new VectorLoader(root).load(batch);
      List<ValueVector> columns = new ArrayList<>();
      List<Field> fields = new ArrayList<>();
      for (FieldVector vector : root.getFieldVectors()) {
        DictionaryEncoding encoding = vector.getField().getDictionary();
        Dictionary dictionary = encoding == null ? null : decoded.lookup(encoding.getId());
        if (dictionary == null) {
          columns.add(vector);
          fields.add(vector.getField());
        } else {
          ValueVector values = DictionaryEncoder.decode(vector, dictionary);
          decodedColumns.add(values);
          columns.add(values);
          fields.add(values.getField());
        }
      }
      report.rows(columns, fields, root.getRowCount());
    } finally {
      decodedColumns.forEach(ValueVector::close);
    }
  }

  /** Counts the compressed bytes the decoder has taken, to say where a failure happened. */
  private static final class CountingInputStream extends FilterInputStream {
    long count;

    CountingInputStream(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        count++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = in.read(b, off, len);
      if (n > 0) {
        count += n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = super.skip(n);
      count += skipped;
      return skipped;
    }
  }
}
