package dev.quiver.tools;

import dev.quiver.codec.SparkStreamCodec;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The dump tool's two readers with an allocator of the caller's, for the fuzz targets (which check
 * that allocator). Rows are rendered as JSON, as with {@code --rows}, and thrown away: that reads
 * every value.
 */
public final class DumpReaders {

  private DumpReaders() {}

  /** {@link ShuffleFileDump} over {@code data} with {@code index} (or none when null). */
  public static long shuffleFile(Path data, Path index, BufferAllocator allocator)
      throws IOException {
    try {
      return new ShuffleFileDump(data, index, null, allocator, discardingReport()).run();
    } catch (QuiverDump.UsageException e) {
      // Only --partition gives one, and it is not set here.
      throw new AssertionError(e);
    }
  }

  /** {@link BroadcastValueDump} over {@code file}. */
  public static long broadcastValue(Path file, SparkStreamCodec codec, BufferAllocator allocator)
      throws IOException {
    return new BroadcastValueDump(file, codec, allocator, discardingReport()).run();
  }

  /**
   * Rows rendered per file, as {@code --limit} does: far more than a fuzz input of a few KiB holds
   * in values that take bytes, while a batch that claims two billion rows of a type that takes none
   * (nulls: a valid stream) is not rendered for minutes.
   */
  static final long ROW_LIMIT = 65_536;

  private static Report discardingReport() {
    PrintStream nowhere =
        new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8);
    return new Report(nowhere, nowhere, Collections.emptyList(), ROW_LIMIT);
  }
}
