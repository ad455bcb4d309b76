package dev.quiver.ipc;

import com.github.luben.zstd.ZstdInputStream;
import com.github.luben.zstd.ZstdOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.Checksum;
import net.jpountz.lz4.LZ4BlockInputStream;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;

/** Real codec streams, framed the way Spark's codecs frame them. */
final class TestCodecs {

  private TestCodecs() {}

  /** Spark's {@code spark.io.compression.lz4.blockSize} default. */
  static final int LZ4_BLOCK_SIZE = 32 * 1024;

  /** The seed Spark's lz4 codec gives its xxhash32 block checksums. */
  private static final int LZ4_CHECKSUM_SEED = 0x9747b28c;

  /**
   * Spark's lz4 codec: LZ4 blocks with xxhash32 checksums. Like Spark (concatenation of streams
   * allowed), the reader takes an end of input at a block boundary as the end of the data, so a
   * stream cut between blocks decompresses without complaint; only the IPC layer can notice.
   */
  static final StreamCodec LZ4 =
      new StreamCodec() {
        @Override
        public InputStream decompress(InputStream in) {
          return new LZ4BlockInputStream(
              in, LZ4Factory.fastestInstance().fastDecompressor(), checksum(), false);
        }

        @Override
        public OutputStream compress(OutputStream out) {
          return new LZ4BlockOutputStream(
              out, LZ4_BLOCK_SIZE, LZ4Factory.fastestInstance().fastCompressor(), checksum(), true);
        }

        private Checksum checksum() {
          return XXHashFactory.fastestInstance().newStreamingHash32(LZ4_CHECKSUM_SEED).asChecksum();
        }

        @Override
        public String toString() {
          return "lz4";
        }
      };

  /** Zstandard frames, as Spark's zstd codec writes them. */
  static final StreamCodec ZSTD =
      new StreamCodec() {
        @Override
        public InputStream decompress(InputStream in) throws IOException {
          return new ZstdInputStream(in);
        }

        @Override
        public OutputStream compress(OutputStream out) throws IOException {
          return new ZstdOutputStream(out, 1);
        }

        @Override
        public String toString() {
          return "zstd";
        }
      };
}
