package dev.quiver.ipc;

import dev.quiver.annotation.Internal;
import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Coalesces many small compressed IPC streams (one per source partition, say) into one stream with
 * one record batch, as the driver does before broadcasting. Streams that carry dictionaries are
 * left as they are: indices encoded against different dictionaries must not be mixed.
 */
@Internal
public final class Coalescer {

  private Coalescer() {}

  /** What {@link #coalesce} did. */
  public static final class Result {
    private final List<byte[]> streams;
    private final int inputStreams;
    private final int inputBatches;
    private final long rows;
    private final boolean coalesced;

    Result(List<byte[]> streams, int inputStreams, int inputBatches, long rows, boolean coalesced) {
      this.streams = Collections.unmodifiableList(streams);
      this.inputStreams = inputStreams;
      this.inputBatches = inputBatches;
      this.rows = rows;
      this.coalesced = coalesced;
    }

    /** The output streams: one after coalescing, none for empty input, else the input. */
    public List<byte[]> streams() {
      return streams;
    }

    public int inputStreams() {
      return inputStreams;
    }

    /** Record batches in the input, all of which went into the output's one batch if coalesced. */
    public int inputBatches() {
      return inputBatches;
    }

    public long rows() {
      return rows;
    }

    /** False when the input was returned as it was (dictionaries, or nothing to merge). */
    public boolean coalesced() {
      return coalesced;
    }

    public long bytes() {
      long total = 0;
      for (byte[] s : streams) {
        total += s.length;
      }
      return total;
    }
  }

  /**
   * Coalesces {@code streams}, all compressed with {@code codec} and of one schema, into a single
   * one-batch stream compressed with the same codec. Empty input, and input whose streams hold no
   * rows, gives no stream.
   */
  public static Result coalesce(List<byte[]> streams, StreamCodec codec, BufferAllocator allocator)
      throws IOException {
    List<DecodedStream> decoded = new ArrayList<>(streams.size());
    Result result;
    try {
      result = decodeAndMerge(streams, decoded, codec, allocator);
    } catch (IOException | RuntimeException | Error e) {
      AutoCloseables.close(e, decoded);
      throw e;
    }
    AutoCloseables.closeNoChecked(AutoCloseables.all(decoded));
    return result;
  }

  /** Decodes {@code streams} into {@code decoded} (which the caller closes), then merges them. */
  private static Result decodeAndMerge(
      List<byte[]> streams,
      List<DecodedStream> decoded,
      StreamCodec codec,
      BufferAllocator allocator)
      throws IOException {
    int batches = 0;
    long rows = 0;
    boolean dictionaries = false;
    for (int i = 0; i < streams.size(); i++) {
      DecodedStream stream =
          ArrowIpc.decode(streams.get(i), codec, allocator, "coalesce input stream " + i);
      decoded.add(stream);
      batches += stream.batches().size();
      rows += stream.rowCount();
      dictionaries |= stream.hasDictionaries();
      if (i > 0 && !stream.schema().equals(decoded.get(0).schema())) {
        throw new IpcFormatException(
            String.format(
                "coalesce input stream %d has schema %s, stream 0 has %s",
                i, stream.schema(), decoded.get(0).schema()));
      }
    }
    if (rows == 0) {
      // Nothing to broadcast: an empty input, or only empty batches, gives no stream.
      return new Result(new ArrayList<>(), streams.size(), batches, 0, !streams.isEmpty());
    }
    if (dictionaries
        || (streams.size() == 1 && batches == 1)
        || appenderCannotMerge(decoded.get(0).schema().getFields(), false)) {
      return new Result(new ArrayList<>(streams), streams.size(), batches, rows, false);
    }
    byte[] merged = merge(decoded, rows, codec, allocator);
    List<byte[]> out = new ArrayList<>(1);
    out.add(merged);
    return new Result(out, streams.size(), batches, rows, true);
  }

  /**
   * Whether Arrow's appender cannot merge batches of {@code fields}, so that their streams are left
   * as they are: a null-typed field inside a struct, list or map (the appender cannot grow such a
   * parent: the null child never gains capacity), or a view type (Arrow 18 and 19's appender throws
   * on list views, and 18.1's on string and binary views too). By name: Arrow 11 has no views.
   */
  private static boolean appenderCannotMerge(List<Field> fields, boolean nested) {
    for (Field field : fields) {
      if (nested && field.getType().getTypeID() == ArrowType.ArrowTypeID.Null) {
        return true;
      }
      if (field.getType().getTypeID().name().endsWith("View")) {
        return true;
      }
      if (appenderCannotMerge(field.getChildren(), true)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] merge(
      List<DecodedStream> decoded, long rows, StreamCodec codec, BufferAllocator allocator)
      throws IOException {
    if (rows > Integer.MAX_VALUE) {
      throw new IpcFormatException(
          "cannot coalesce " + rows + " rows into one Arrow batch (at most 2^31 - 1)");
    }
    DecodedStream first = decoded.get(0);
    try (VectorSchemaRoot target = VectorSchemaRoot.create(first.schema(), allocator);
        VectorSchemaRoot loaded = VectorSchemaRoot.create(first.schema(), allocator)) {
      target.allocateNew();
      target.setRowCount(0);
      VectorLoader loader = new VectorLoader(loaded);
      for (DecodedStream stream : decoded) {
        for (ArrowRecordBatch batch : stream.batches()) {
          loader.load(batch);
          VectorSchemaRootAppender.append(false, target, loaded);
        }
      }
      // The appender keeps vectors' counts; a zero-column root only has its row count.
      target.setRowCount((int) rows);
      return ArrowIpc.encode(target, null, codec);
    }
  }
}
