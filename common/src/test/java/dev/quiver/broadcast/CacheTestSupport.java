package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.quiver.ipc.StreamCodec;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;
import org.apache.arrow.memory.BufferAllocator;

/** Shared helpers of the broadcast cache tests. */
final class CacheTestSupport {

  private CacheTestSupport() {}

  /** Upper bound for anything that must merely not hang. */
  static final long TIMEOUT_SECONDS = 10;

  /** Spark's {@code LZ4CompressionCodec} framing: lz4-java blocks with a seeded xxhash32. */
  static final StreamCodec SPARK_LZ4 =
      new StreamCodec() {
        private static final int SEED = 0x9747b28c;
        private static final int BLOCK_SIZE = 32 * 1024;

        @Override
        public InputStream decompress(InputStream in) {
          return new LZ4BlockInputStream(
              in,
              LZ4Factory.fastestInstance().fastDecompressor(),
              XXHashFactory.fastestInstance().newStreamingHash32(SEED).asChecksum(),
              false);
        }

        @Override
        public OutputStream compress(OutputStream out) {
          return new LZ4BlockOutputStream(
              out,
              BLOCK_SIZE,
              LZ4Factory.fastestInstance().fastCompressor(),
              XXHashFactory.fastestInstance().newStreamingHash32(SEED).asChecksum(),
              false);
        }

        @Override
        public String toString() {
          return "spark-lz4";
        }
      };

  /** Bytes one decode of {@code source} allocates (decoded privately, measured, freed). */
  static long bytesOfOneDecode(BroadcastSource source, BufferAllocator root) throws Exception {
    try (BufferAllocator measure = root.newChildAllocator("measure", 0, Long.MAX_VALUE)) {
      try (DecodedBroadcast decoded = BroadcastDecoder.ARROW_IPC.decode(source, measure)) {
        assertTrue(decoded.streams().size() == source.streamCount());
        return measure.getAllocatedMemory();
      }
    }
  }

  /**
   * The end of every test: the cache holds nothing, nothing is allocated, and the allocator closes.
   */
  static void assertAllFreedAndClose(DecodedBroadcastCache cache, BufferAllocator allocator) {
    CacheSnapshot snapshot = cache.snapshot();
    assertTrue(snapshot.isEmpty(), () -> "the cache still holds " + snapshot);
    assertEquals(0, allocator.getAllocatedMemory(), () -> "leaked: " + allocator.toVerboseString());
    allocator.close();
  }

  /** Waits (bounded) until {@code condition} holds. */
  static void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting until " + what);
      }
      Thread.sleep(2);
    }
  }
}
