package dev.quiver.codec;

import dev.quiver.annotation.Internal;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyError;

/**
 * Quiver's readers of the two Snappy stream formats, for untrusted bytes: no allocation larger than
 * the bytes that exist (and a bounded factor of them), and snappy-java's native decompressor only
 * ever called on arrays that hold the lengths it will read and write.
 *
 * <p>Why not snappy-java's own streams (facts checked in snappy-java 1.1.10.8's bytecode, the
 * version of the Spark 4.1 profile; 1.1.10.5 and 1.1.10.7 of the other profiles have the same or
 * weaker checks):
 *
 * <ul>
 *   <li>{@code SnappyInputStream} reads a 4-byte chunk length and allocates a {@code byte[]} of it
 *       before reading the chunk; the only bound is {@code MAX_CHUNK_SIZE}, 512 MiB (the
 *       CVE-2023-34455 fix refuses negative lengths; the 512 MiB cap came later). Then it allocates
 *       the uncompressed length the chunk's varint declares, with no bound at all. Eight hostile
 *       bytes cost 512 MiB; a dozen cost up to 2 GiB.
 *   <li>{@code SnappyFramedInputStream} allocates direct buffers for a chunk's 3-byte length (up to
 *       16 MiB, plus {@code maxCompressedLength} of it) before reading the chunk, and a direct
 *       buffer of whatever uncompressed length the chunk declares.
 * </ul>
 *
 * <p>These readers read a chunk into a heap array that grows as its bytes arrive, bound the
 * declared uncompressed length by Snappy's largest expansion of the compressed bytes read (see
 * {@link #maxUncompressedLength}), and only then allocate for it and call {@link
 * Snappy#uncompress(byte[], int, int, byte[], int)}. That native call writes the declared length
 * without checking the output array's size, so the output array is always at least that long; it
 * reads only the given input range, and snappy's decompressor checks every copy and literal against
 * the input and the declared output length.
 */
@Internal
public final class SnappyStreams {

  /** A chunk's first allocation before its bytes arrive; the array then doubles as they do. */
  static final int INITIAL_CHUNK_BUFFER = 64 * 1024;

  /** The largest array the JVM reliably allocates. */
  private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

  private static final byte[] EMPTY = new byte[0];

  private SnappyStreams() {}

  /**
   * snappy-java's stream format, as {@code SnappyOutputStream} writes it and Spark's snappy codec
   * reads it: a 16-byte header (the magic {@code 82 'SNAPPY' 00}, then version and compatible
   * version as big-endian ints), then chunks of a 4-byte big-endian length and that many bytes of
   * raw Snappy. A header may follow any chunk (concatenated streams, which Spark's shuffle merges
   * produce). An empty input is an empty stream; input without the header (which snappy-java would
   * read as one raw Snappy block and Spark never writes) is refused.
   */
  public static InputStream sparkStream(InputStream in) {
    return new SparkSnappyInput(in);
  }

  /**
   * The Snappy framing format (framing_format.txt of google/snappy), as Comet's shuffle and
   * snappy-java's {@code SnappyFramedOutputStream} write it: chunks of a type byte and a 3-byte
   * little-endian length; compressed (0x00) and uncompressed (0x01) chunks carry a masked CRC32C of
   * their uncompressed bytes, which is checked, and at most 65536 uncompressed bytes.
   */
  public static InputStream framed(InputStream in) {
    return new FramedSnappyInput(in);
  }

  /**
   * The most bytes {@code compressedLength} bytes of raw Snappy can decompress to. Snappy's densest
   * element is a copy with a 2-byte offset: 3 bytes for at most 64 output bytes (a copy with a
   * 1-byte offset is 2 bytes for at most 11, one with a 4-byte offset 5 bytes for at most 64, and a
   * literal is never shorter than its output). So no valid chunk declares more than 64/3 of its
   * length.
   */
  static long maxUncompressedLength(long compressedLength) {
    return (64 * compressedLength + 2) / 3;
  }

  /** Chunk reading, bounded decompression and the InputStream side, shared by both formats. */
  private abstract static class ChunkedInput extends InputStream {

    private final InputStream in;
    private final String format;

    private byte[] compressed = EMPTY;
    byte[] uncompressed = EMPTY;
    int position;
    int limit;
    private boolean ended;
    private boolean closed;

    /** Raw bytes consumed. */
    long offset;

    /** The current chunk: index from 0, and the raw offset of its first byte. */
    long chunkIndex = -1;

    long chunkOffset;

    ChunkedInput(InputStream in, String format) {
      this.in = Objects.requireNonNull(in, "in");
      this.format = format;
    }

    /**
     * Reads the next chunk (or header) and sets {@link #position} and {@link #limit} to what it
     * gives, possibly nothing.
     *
     * @return false at the end of the stream
     */
    abstract boolean nextChunk() throws IOException;

    @Override
    public int read() throws IOException {
      if (!fill()) {
        return -1;
      }
      return uncompressed[position++] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      Objects.checkFromIndexSize(off, len, b.length);
      if (len == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      int n = Math.min(len, limit - position);
      System.arraycopy(uncompressed, position, b, off, n);
      position += n;
      return n;
    }

    @Override
    public int available() {
      return limit - position;
    }

    @Override
    public void close() throws IOException {
      if (!closed) {
        closed = true;
        compressed = EMPTY;
        uncompressed = EMPTY;
        position = 0;
        limit = 0;
        in.close();
      }
    }

    private boolean fill() throws IOException {
      if (closed) {
        throw new IOException("the " + format + " stream is closed");
      }
      while (position == limit) {
        if (ended) {
          return false;
        }
        position = 0;
        limit = 0;
        if (!nextChunk()) {
          ended = true;
          return false;
        }
      }
      return true;
    }

    /** Starts a chunk at the current offset. */
    void beginChunk() {
      chunkIndex++;
      chunkOffset = offset;
    }

    /** Reads up to {@code n} bytes into {@code dst}; fewer only at the end of the stream. */
    int readUpTo(byte[] dst, int n) throws IOException {
      int have = 0;
      while (have < n) {
        int got = in.read(dst, have, n - have);
        if (got < 0) {
          break;
        }
        have += got;
      }
      offset += have;
      return have;
    }

    /** Reads exactly {@code n} bytes into {@code dst}, or fails naming {@code what}. */
    void readFully(byte[] dst, int n, String what) throws IOException {
      int got = readUpTo(dst, n);
      if (got < n) {
        throw truncated(what, n, got);
      }
    }

    /** Skips exactly {@code n} bytes through a small buffer, allocating nothing for them. */
    void skipFully(long n, byte[] scratch, String what) throws IOException {
      long left = n;
      while (left > 0) {
        int got = readUpTo(scratch, (int) Math.min(scratch.length, left));
        if (got == 0) {
          throw truncated(what, n, n - left);
        }
        left -= got;
      }
    }

    /**
     * Reads the chunk's {@code length} compressed bytes into {@link #compressed}, growing it as the
     * bytes arrive: a length the stream does not hold costs at most {@link #INITIAL_CHUNK_BUFFER}
     * or twice the bytes that are there.
     */
    void readCompressed(int length) throws IOException {
      if (compressed.length < Math.min(length, INITIAL_CHUNK_BUFFER)) {
        compressed = new byte[Math.min(length, INITIAL_CHUNK_BUFFER)];
      }
      int have = 0;
      while (have < length) {
        if (have == compressed.length) {
          int bigger = (int) Math.min(length, Math.min(MAX_ARRAY, 2L * compressed.length));
          byte[] grown = new byte[bigger];
          System.arraycopy(compressed, 0, grown, 0, have);
          compressed = grown;
        }
        int got = in.read(compressed, have, Math.min(length, compressed.length) - have);
        if (got < 0) {
          offset += have;
          throw truncated("the chunk's compressed bytes", length, have);
        }
        have += got;
      }
      offset += have;
    }

    /**
     * Decompresses the {@code length} bytes of {@link #compressed} into {@link #uncompressed}.
     *
     * @param maxDeclared the format's own bound on a chunk's uncompressed length
     * @return the uncompressed length
     */
    int uncompressChunk(int length, long maxDeclared) throws IOException {
      int declared;
      try {
        // Parses the leading varint only, within [0, length).
        declared = Snappy.uncompressedLength(compressed, 0, length);
      } catch (IOException | SnappyError e) {
        throw corrupt("its uncompressed length does not parse: " + e.getMessage(), e);
      }
      long bound = Math.min(maxDeclared, maxUncompressedLength(length));
      // A varint above 2^31 - 1 comes back negative.
      if (declared < 0 || declared > bound) {
        throw corrupt(
            "it declares "
                + Integer.toUnsignedString(declared)
                + " uncompressed bytes, more than its "
                + length
                + " compressed bytes can hold (at most "
                + bound
                + ")",
            null);
      }
      if (uncompressed.length < declared) {
        uncompressed = new byte[declared];
      }
      int actual;
      try {
        // The output array holds the declared length: the native call writes up to that many.
        actual = Snappy.uncompress(compressed, 0, length, uncompressed, 0);
      } catch (IOException | SnappyError e) {
        throw corrupt("it does not decompress: " + e.getMessage(), e);
      }
      if (actual != declared) {
        throw corrupt("it decompresses to " + actual + " bytes but declares " + declared, null);
      }
      return actual;
    }

    /** The bytes of an uncompressed chunk, read as they are: bounded by the caller. */
    void readStored(int length) throws IOException {
      if (uncompressed.length < length) {
        uncompressed = new byte[length];
      }
      readFully(uncompressed, length, "the chunk's data");
    }

    IOException corrupt(String problem, Throwable cause) {
      String message =
          "Corrupt "
              + format
              + " stream: chunk "
              + chunkIndex
              + " at stream offset "
              + chunkOffset
              + ": "
              + problem;
      return new SnappyFormatException(message, cause);
    }

    EOFException truncated(String what, long expected, long actual) {
      return new EOFException(
          "The "
              + format
              + " stream ended inside chunk "
              + chunkIndex
              + " (which starts at stream offset "
              + chunkOffset
              + "): reading "
              + what
              + " needed "
              + expected
              + " bytes, got "
              + actual);
    }
  }

  private static final class SparkSnappyInput extends ChunkedInput {

    /** {@code SnappyCodec.MAGIC_HEADER}. */
    private static final byte[] MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

    /** The magic's first 4 bytes as a big-endian int: where a chunk length would be. */
    private static final int MAGIC_HEAD = 0x82534E41;

    private static final int HEADER_BYTES = 16;

    /** {@code SnappyCodec.MINIMUM_COMPATIBLE_VERSION}. */
    private static final int MINIMUM_VERSION = 1;

    private final byte[] word = new byte[HEADER_BYTES];
    private boolean started;

    SparkSnappyInput(InputStream in) {
      super(in, "snappy-java");
    }

    @Override
    boolean nextChunk() throws IOException {
      beginChunk();
      if (!started) {
        started = true;
        int got = readUpTo(word, HEADER_BYTES);
        if (got == 0) {
          return false;
        }
        checkHeader(got);
        return true;
      }
      int got = readUpTo(word, 4);
      if (got == 0) {
        return false;
      }
      if (got < 4) {
        throw truncated("the chunk length", 4, got);
      }
      int length = bigEndianInt(word, 0);
      if (length == MAGIC_HEAD) {
        // A concatenated stream's header.
        int rest = readUpTo(word, HEADER_BYTES - 4);
        System.arraycopy(word, 0, word, 4, rest);
        System.arraycopy(MAGIC, 0, word, 0, 4);
        checkHeader(4 + rest);
        return true;
      }
      if (length <= 0) {
        throw corrupt(
            "chunk length " + Integer.toUnsignedString(length) + " is not a possible length", null);
      }
      readCompressed(length);
      limit = uncompressChunk(length, MAX_ARRAY);
      return true;
    }

    private void checkHeader(int got) throws IOException {
      if (got < HEADER_BYTES) {
        if (got > 0 && word[0] != MAGIC[0]) {
          throw notStream();
        }
        throw truncated("the stream header", HEADER_BYTES, got);
      }
      for (int i = 0; i < MAGIC.length; i++) {
        if (word[i] != MAGIC[i]) {
          throw notStream();
        }
      }
      int version = bigEndianInt(word, 8);
      if (version < MINIMUM_VERSION) {
        throw corrupt(
            "the header's version "
                + version
                + " is below the oldest snappy-java reads ("
                + MINIMUM_VERSION
                + ")",
            null);
      }
    }

    private IOException notStream() {
      return corrupt(
          "the input does not start with snappy-java's stream header (82 'SNAPPY' 00); Spark's"
              + " snappy codec always writes one",
          null);
    }
  }

  private static final class FramedSnappyInput extends ChunkedInput {

    private static final int STREAM_IDENTIFIER = 0xFF;
    private static final int COMPRESSED = 0x00;
    private static final int UNCOMPRESSED = 0x01;
    private static final int PADDING = 0xFE;
    private static final byte[] IDENTIFIER = {'s', 'N', 'a', 'P', 'p', 'Y'};

    /** The framing format's limit on a chunk's uncompressed bytes. */
    private static final int MAX_UNCOMPRESSED = 65536;

    /** The longest valid compressed chunk: its checksum and the worst Snappy expansion. */
    private static final int MAX_COMPRESSED_CHUNK =
        4 + (32 + MAX_UNCOMPRESSED + MAX_UNCOMPRESSED / 6);

    private final byte[] header = new byte[4];
    private final byte[] scratch = new byte[4096];
    private final CRC32C crc = new CRC32C();
    private boolean identified;

    FramedSnappyInput(InputStream in) {
      super(in, "Snappy framed");
    }

    @Override
    boolean nextChunk() throws IOException {
      beginChunk();
      int got = readUpTo(header, 4);
      if (got == 0) {
        return false;
      }
      if (got < 4) {
        throw truncated("the chunk header", 4, got);
      }
      int type = header[0] & 0xFF;
      int length = (header[1] & 0xFF) | (header[2] & 0xFF) << 8 | (header[3] & 0xFF) << 16;
      if (!identified && type != STREAM_IDENTIFIER) {
        throw corrupt(
            String.format(
                "the stream starts with chunk type 0x%02X, not the stream identifier", type),
            null);
      }
      switch (type) {
        case STREAM_IDENTIFIER:
          if (length != IDENTIFIER.length) {
            throw corrupt("the stream identifier's length is " + length + ", not 6", null);
          }
          readFully(scratch, IDENTIFIER.length, "the stream identifier");
          for (int i = 0; i < IDENTIFIER.length; i++) {
            if (scratch[i] != IDENTIFIER[i]) {
              throw corrupt("the stream identifier is not \"sNaPpY\"", null);
            }
          }
          identified = true;
          return true;
        case COMPRESSED:
        case UNCOMPRESSED:
          return dataChunk(type == COMPRESSED, length);
        default:
          if (type < 0x80) {
            throw corrupt(
                String.format("chunk type 0x%02X is reserved and unskippable", type), null);
          }
          // Padding (0xFE) and reserved skippable types (0x80 to 0xFD).
          skipFully(length, scratch, type == PADDING ? "padding" : "a skippable chunk");
          return true;
      }
    }

    private boolean dataChunk(boolean isCompressed, int length) throws IOException {
      int max = isCompressed ? MAX_COMPRESSED_CHUNK : 4 + MAX_UNCOMPRESSED;
      if (length < 4 || length > max) {
        throw corrupt(
            (isCompressed ? "compressed" : "uncompressed")
                + " chunk length "
                + length
                + " is outside the format's 4 to "
                + max,
            null);
      }
      readFully(header, 4, "the chunk's checksum");
      int expectedCrc =
          (header[0] & 0xFF)
              | (header[1] & 0xFF) << 8
              | (header[2] & 0xFF) << 16
              | (header[3] & 0xFF) << 24;
      int dataLength = length - 4;
      if (isCompressed) {
        readCompressed(dataLength);
        limit = uncompressChunk(dataLength, MAX_UNCOMPRESSED);
      } else {
        readStored(dataLength);
        limit = dataLength;
      }
      crc.reset();
      crc.update(uncompressed, 0, limit);
      int value = (int) crc.getValue();
      int masked = ((value >>> 15) | (value << 17)) + 0xA282EAD8;
      if (masked != expectedCrc) {
        limit = 0;
        throw corrupt("its checksum does not match its data", null);
      }
      return true;
    }
  }

  private static int bigEndianInt(byte[] b, int at) {
    return (b[at] & 0xFF) << 24
        | (b[at + 1] & 0xFF) << 16
        | (b[at + 2] & 0xFF) << 8
        | (b[at + 3] & 0xFF);
  }
}
