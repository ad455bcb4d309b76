package dev.quiver.codec;

import dev.quiver.annotation.Public;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * A compression codec as a pair of stream wrappers. Quiver's core takes the codec as a parameter so
 * that it never touches Spark: the Spark module passes Spark's configured {@code CompressionCodec},
 * the shuffle blocks pass their own block codecs.
 */
@Public
public interface StreamCodec {

  /** The identity codec: bytes pass through unchanged. */
  StreamCodec NONE =
      new StreamCodec() {
        @Override
        public InputStream decompress(InputStream in) {
          return in;
        }

        @Override
        public OutputStream compress(OutputStream out) {
          return out;
        }

        @Override
        public boolean isIdentity() {
          return true;
        }

        @Override
        public String toString() {
          return "none";
        }
      };

  /** Wraps {@code in} so that reading it gives the decompressed bytes. */
  InputStream decompress(InputStream in) throws IOException;

  /**
   * Wraps {@code out} so that bytes written to it reach {@code out} compressed. Closing the
   * returned stream finishes the compressed stream and closes {@code out}.
   */
  OutputStream compress(OutputStream out) throws IOException;

  /**
   * Whether this codec passes bytes through unchanged, so that a stream's compressed length is its
   * decoded length (which the decoder then holds it to).
   */
  default boolean isIdentity() {
    return false;
  }
}
