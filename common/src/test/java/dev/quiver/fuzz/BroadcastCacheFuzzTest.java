package dev.quiver.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.broadcast.BroadcastSource;
import dev.quiver.broadcast.CacheSnapshot;
import dev.quiver.broadcast.DecodedBroadcastCache;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.InMemoryBroadcast;
import dev.quiver.testing.TestData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Tag;

/**
 * The broadcast cache's open-and-read with a hostile {@link BroadcastSource}. An input is:
 *
 * <pre>
 * byte 0      low three bits: the codec ({@link FuzzCodecs#CODECS}); bit 3: the streams are
 *             uncompressed IPC and the target compresses them; bit 4: open with sharing off
 * byte 1      the number of streams less one, modulo 3
 * then        each stream but the last: a u16 little-endian length and that many bytes
 *             (cut short where the input ends); the last stream: the rest
 * </pre>
 *
 * After each input: a failed open leaves no entry in the cache and nothing allocated; completing
 * the task frees everything; and a valid broadcast under the same id then reads in full.
 */
@Tag("bad-input")
class BroadcastCacheFuzzTest {

  static final int COMPRESS_BY_TARGET = 0x08;
  static final int SHARING_OFF = 0x10;

  private static final long BROADCAST_ID = 7;
  private static final int VALID_ROWS = 50;

  /** One valid build-side stream, uncompressed, for the read that must work after each input. */
  private static final byte[] VALID_STREAM = validStream();

  @FuzzTest
  void openAndRead(byte[] input) throws Throwable {
    if (input.length < 2) {
      return;
    }
    StreamCodec codec = FuzzCodecs.pick(input[0]);
    boolean share = (input[0] & SHARING_OFF) == 0;
    List<byte[]> streams = streams(input);
    if ((input[0] & COMPRESS_BY_TARGET) != 0) {
      List<byte[]> compressed = new ArrayList<>();
      for (byte[] s : streams) {
        compressed.add(Codecs.compress(codec, s));
      }
      streams = compressed;
    }
    FuzzCodecs.Counting counting = new FuzzCodecs.Counting(codec);
    FuzzChecks.Memory memory = FuzzChecks.memory();
    DecodedBroadcastCache cache = new DecodedBroadcastCache(memory.allocator);
    Throwable thrown = null;
    FakeTask task = new FakeTask();
    try {
      BroadcastReader reader =
          cache.open(new InMemoryBroadcast(BROADCAST_ID, counting, streams, false), task, share);
      while (reader.next()) {
        FuzzChecks.readAll(reader.current());
        reader.dictionaries();
      }
    } catch (Throwable t) {
      thrown = t;
      CacheSnapshot afterFailure = cache.snapshot();
      if (!afterFailure.isEmpty() || memory.allocator.getAllocatedMemory() != 0) {
        AssertionError finding =
            new AssertionError(
                "a failed open left "
                    + afterFailure
                    + ", "
                    + memory.allocator.getAllocatedMemory()
                    + " bytes allocated");
        finding.addSuppressed(t);
        thrown = finding;
      }
    } finally {
      task.complete();
    }
    if (thrown == null || isDocumented(thrown)) {
      checkEmpty(cache, "after the task completed");
      readValid(cache, codec, share);
      checkEmpty(cache, "after the valid read");
    }
    memory.finish(
        thrown,
        counting.read() + VALID_STREAM.length,
        "broadcast cache, " + FuzzCodecs.describe(codec));
  }

  private static boolean isDocumented(Throwable thrown) {
    try {
      FuzzChecks.allowOnlyDocumented(thrown);
      return true;
    } catch (Throwable t) {
      return false;
    }
  }

  /** The streams an input holds, by the layout in the class comment. */
  static List<byte[]> streams(byte[] input) {
    int count = 1 + (input[1] & 0xFF) % 3;
    List<byte[]> streams = new ArrayList<>();
    int at = 2;
    for (int s = 0; s < count - 1; s++) {
      int length = 0;
      if (at + 2 <= input.length) {
        length = (input[at] & 0xFF) | (input[at + 1] & 0xFF) << 8;
        at += 2;
      } else {
        at = input.length;
      }
      length = Math.min(length, input.length - at);
      streams.add(copy(input, at, length));
      at += length;
    }
    streams.add(copy(input, at, input.length - at));
    return streams;
  }

  /** The input bytes for {@code streams} laid out as {@link #streams} reads them. */
  static byte[] layout(int flags, StreamCodec codec, List<byte[]> streams) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(FuzzCodecs.selector(codec) | flags);
    out.write(streams.size() - 1);
    for (int s = 0; s < streams.size(); s++) {
      byte[] bytes = streams.get(s);
      if (s < streams.size() - 1) {
        out.write(bytes.length & 0xFF);
        out.write(bytes.length >>> 8);
      }
      out.write(bytes, 0, bytes.length);
    }
    return out.toByteArray();
  }

  private static byte[] copy(byte[] bytes, int offset, int length) {
    byte[] copy = new byte[length];
    System.arraycopy(bytes, offset, copy, 0, length);
    return copy;
  }

  private static void checkEmpty(DecodedBroadcastCache cache, String when) {
    CacheSnapshot snapshot = cache.snapshot();
    if (!snapshot.isEmpty() || snapshot.allocatedBytes() != 0) {
      throw new AssertionError(when + " the cache holds " + snapshot);
    }
  }

  /** A valid broadcast under the same id reads in full. */
  private static void readValid(DecodedBroadcastCache cache, StreamCodec codec, boolean share)
      throws IOException {
    List<byte[]> streams = new ArrayList<>();
    streams.add(Codecs.compress(codec, VALID_STREAM));
    FakeTask task = new FakeTask();
    long rows = 0;
    try {
      BroadcastReader reader =
          cache.open(new InMemoryBroadcast(BROADCAST_ID, codec, streams, false), task, share);
      while (reader.next()) {
        FuzzChecks.readAll(reader.current());
        rows += reader.current().getRowCount();
      }
    } finally {
      task.complete();
    }
    if (rows != VALID_ROWS) {
      throw new AssertionError("the valid broadcast read " + rows + " rows, not " + VALID_ROWS);
    }
  }

  private static byte[] validStream() {
    try (BufferAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = TestData.buildSide(allocator, 0, VALID_ROWS)) {
      return ArrowIpc.encode(root, null, StreamCodec.NONE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
