package dev.quiver.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.shuffle.RawBlockIterator;
import dev.quiver.shuffle.ShuffleBlockFormat;
import dev.quiver.testing.FakeTask;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every decoder entry point, over streams that lie about their lengths: for each committed fuzz
 * seed named below (valid streams of the decoder's kind), every 4 bytes of its first {@link
 * #LIE_SPAN} bytes are overwritten, one place at a time, with a length of about 2 GiB and with one
 * of about 16 MiB (below the metadata and block limits, so it gets past the first checks), and the
 * result goes through the decoder's fuzz target. The targets check, per input, with a {@link
 * FuzzChecks#memory() RootAllocator} of its own: only Quiver's documented exceptions, the allocator
 * at zero bytes at the end, and its peak at most {@link FuzzChecks#PEAK_BYTES_PER_INPUT_BYTE} times
 * the input's decompressed bytes plus {@link FuzzChecks#PEAK_SLACK_BYTES}, with no allocation the
 * allocator's limit refused. The raw-block iterator allocates no Arrow memory: its body buffer
 * (direct) is measured in the JVM's direct buffer pool while it reads.
 *
 * <p>The seeds are the fuzz corpus ({@code dev/fuzz --seeds} writes them), so no stream is built
 * here; the names pick the decoder each seed reaches (body compression: a {@code BodyCompression}
 * on every batch; big-endian: the schema's flag; views, unions and run-end encoded columns).
 */
@Tag("bad-input")
class HostileLengthBoundTest {

  /** The bytes of each seed where lengths are planted: metadata, headers and the first buffers. */
  private static final int LIE_SPAN = 768;

  private static final int[] LIES = {0x7FFF_FFF0, 0x00FF_FFF0};

  private static final Path SEEDS = Paths.get("src/test/resources/dev/quiver/fuzz");

  /**
   * The raw-block iterator's body buffer: at most its trusted 4 MiB or twice what arrived (see
   * {@code BodyBuffer}), so at most this for the fuzz seeds' sizes.
   */
  private static final long RAW_BODY_BOUND = 8L * 1024 * 1024;

  private final IpcDecodeFuzzTest ipc = new IpcDecodeFuzzTest();
  private final ShuffleFuzzTest shuffle = new ShuffleFuzzTest();
  private final BroadcastCacheFuzzTest broadcast = new BroadcastCacheFuzzTest();

  @Test
  void ipcStreamDecode() throws Throwable {
    lie(
        ipc::uncompressedStream,
        "IpcDecodeFuzzTestInputs/uncompressedStream",
        "all-types-spark-none",
        "all-types-spark-lz4",
        "dictionary-spark-none",
        "comet-broadcast-spark-none");
  }

  @Test
  void ipcBodyCompressionLz4() throws Throwable {
    lie(
        ipc::uncompressedStream,
        "IpcDecodeFuzzTestInputs/uncompressedStream",
        "body-lz4-all-types-spark-none",
        "body-lz4-dictionary-spark-lz4");
  }

  @Test
  void ipcBodyCompressionZstd() throws Throwable {
    lie(
        ipc::uncompressedStream,
        "IpcDecodeFuzzTestInputs/uncompressedStream",
        "body-zstd-all-types-spark-none",
        "body-zstd-dictionary-spark-lz4");
  }

  @Test
  void bigEndianConversion() throws Throwable {
    lie(
        ipc::uncompressedStream,
        "IpcDecodeFuzzTestInputs/uncompressedStream",
        "big-endian-every-type-spark-none",
        "big-endian-zstd-every-type-spark-lz4",
        "big-endian-dictionary-spark-none");
  }

  @Test
  void viewsUnionsAndRunEnds() throws Throwable {
    lie(
        ipc::uncompressedStream,
        "IpcDecodeFuzzTestInputs/uncompressedStream",
        "views-spark-none",
        "unions-runs-spark-lz4",
        "body-zstd-views-spark-none",
        "big-endian-unions-runs-spark-none");
  }

  /** The codecs' own framing: lengths planted in block headers and frame descriptors. */
  @Test
  void sparkLz4Framing() throws Throwable {
    lie(
        ipc::compressedBytes,
        "IpcDecodeFuzzTestInputs/compressedBytes",
        "all-types-spark-lz4",
        "build-side-spark-lz4",
        "all-types-block-lz4");
  }

  @Test
  void snappyStreams() throws Throwable {
    lie(
        ipc::compressedBytes,
        "IpcDecodeFuzzTestInputs/compressedBytes",
        "all-types-spark-snappy",
        "all-types-block-snappy");
  }

  @Test
  void zstdStreams() throws Throwable {
    lie(
        ipc::compressedBytes,
        "IpcDecodeFuzzTestInputs/compressedBytes",
        "all-types-spark-zstd",
        "all-types-block-zstd");
  }

  @Test
  void shuffleBlockDecoder() throws Throwable {
    lie(
        shuffle::blockDecoder,
        "ShuffleFuzzTestInputs",
        "three-blocks-none",
        "all-types-zstd",
        "comet-rows-lz4",
        "all-types-snappy");
  }

  @Test
  void rawBlockIterator() throws Throwable {
    AtomicLong peakDirect = new AtomicLong();
    lie(
        input -> {
          shuffle.rawBlocks(input);
          peakDirect.accumulateAndGet(rawBlocksDirectPeak(input), Math::max);
        },
        "ShuffleFuzzTestInputs",
        "three-blocks-none",
        "all-types-lz4",
        "comet-rows-zstd");
    assertTrue(
        peakDirect.get() <= RAW_BODY_BOUND,
        "the raw-block iterator's body buffer reached " + peakDirect.get() + " bytes");
  }

  @Test
  void broadcastCacheOpenAndRead() throws Throwable {
    lie(
        broadcast::openAndRead,
        "BroadcastCacheFuzzTestInputs/openAndRead",
        "build-side-spark-none",
        "build-side-block-lz4",
        "three-streams",
        "dictionary");
  }

  /** A fuzz target's per-input check. */
  private interface Target {
    void check(byte[] input) throws Throwable;
  }

  /**
   * Runs {@code target} on each seed as it is, then on every lying variant of it. The first byte of
   * the IPC and cache targets' seeds is left alone: it picks the codec; a shuffle stream's first
   * bytes are its first block's length.
   */
  private static void lie(Target target, String folder, String... seeds) throws Throwable {
    int first = folder.startsWith("Shuffle") ? 0 : 1;
    int variants = 0;
    for (byte[] seed : seeds(folder, seeds)) {
      target.check(seed);
      int span = Math.min(seed.length - 4, LIE_SPAN);
      for (int at = first; at <= span; at++) {
        for (int lie : LIES) {
          byte[] lying = seed.clone();
          lying[at] = (byte) lie;
          lying[at + 1] = (byte) (lie >>> 8);
          lying[at + 2] = (byte) (lie >>> 16);
          lying[at + 3] = (byte) (lie >>> 24);
          try {
            target.check(lying);
          } catch (Throwable finding) {
            throw new AssertionError(
                "seed " + folder + " " + String.join(",", seeds) + ": " + lie + " at byte " + at,
                finding);
          }
          variants++;
        }
      }
    }
    assertTrue(variants > 0, "no variant of " + String.join(", ", seeds));
  }

  private static List<byte[]> seeds(String folder, String... names) {
    List<byte[]> seeds = new ArrayList<>();
    for (String name : names) {
      try {
        seeds.add(Files.readAllBytes(SEEDS.resolve(folder).resolve(name)));
      } catch (IOException e) {
        throw new UncheckedIOException("seed " + folder + "/" + name, e);
      }
    }
    return seeds;
  }

  /**
   * The most direct memory in use above where it started, sampled at every read of the raw-block
   * iterator's stream (so after each body buffer is allocated).
   */
  private static long rawBlocksDirectPeak(byte[] input) throws IOException {
    BufferPoolMXBean direct = directPool();
    long before = direct.getMemoryUsed();
    AtomicLong peak = new AtomicLong();
    InputStream sampled =
        new FilterInputStream(new ByteArrayInputStream(input)) {
          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            peak.accumulateAndGet(direct.getMemoryUsed() - before, Math::max);
            return super.read(b, off, len);
          }
        };
    FakeTask task = new FakeTask();
    try (RawBlockIterator blocks =
        new RawBlockIterator(sampled, task, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, "bound")) {
      while (blocks.next()) {
        blocks.body();
      }
    } catch (IOException | RuntimeException refused) {
      // Refusals are the target's to check; here only the memory counts.
    } finally {
      task.complete();
    }
    return peak.get();
  }

  private static BufferPoolMXBean directPool() {
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        return pool;
      }
    }
    throw new AssertionError("no direct buffer pool");
  }
}
