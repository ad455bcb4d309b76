package dev.quiver.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.quiver.codec.SparkStreamCodec;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import org.junit.jupiter.api.Tag;

/**
 * Spark's lz4 framing reader, through the API the decoders use: {@link SparkStreamCodec#LZ4}{@code
 * .decompress(InputStream)}, read to its end.
 */
@Tag("bad-input")
class SparkLz4FuzzTest {

  /** The input is the compressed stream as Spark's lz4 codec frames it. */
  @FuzzTest
  void decompress(byte[] input) throws Throwable {
    Throwable thrown = null;
    byte[] piece = new byte[64 * 1024];
    try (InputStream in = SparkStreamCodec.LZ4.decompress(new ByteArrayInputStream(input))) {
      while (in.read(piece) >= 0) {
        // Read to the end: every block is decompressed and checked.
      }
    } catch (Throwable t) {
      thrown = t;
    }
    FuzzChecks.allowOnlyDocumented(thrown);
  }
}
