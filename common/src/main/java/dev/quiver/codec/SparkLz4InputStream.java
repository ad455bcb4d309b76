package dev.quiver.codec;

import dev.quiver.io.ArrayInputStream;
import dev.quiver.io.BufferReadable;
import dev.quiver.io.PiecewiseReads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Reads Spark's lz4 framing (what lz4-java's {@code LZ4BlockOutputStream} writes under Spark's
 * {@code LZ4CompressionCodec}) from untrusted bytes, checking every length before it allocates or
 * decompresses anything.
 *
 * <p>The framing is a sequence of blocks. Each starts with a 21-byte header: the magic {@code
 * LZ4Block}; a token whose high nibble is the method ({@code 0x10} raw, {@code 0x20} lz4) and whose
 * low nibble is the level {@code L}, which caps the block at {@code 2^(10 + L)} decompressed bytes;
 * the compressed length, the decompressed length and the checksum of the decompressed bytes (the
 * low 28 bits of their xxhash32, seed {@code 0x9747b28c}), each a little-endian int. The block's
 * compressed bytes follow. A block with both lengths 0 (and checksum 0) ends a stream; streams may
 * follow one another, and are read as one, as Spark reads them.
 *
 * <p><b>End of input.</b> An end of input where a block header would start ends the data if it
 * comes at the very start of the input (zero bytes: no data) or right after an end block. Anywhere
 * else it is truncation: inside a header or a block, or after a data block whose stream has no end
 * block. That strict rule refuses nothing Spark writes, since Spark always finishes its lz4 streams
 * (closing an {@code LZ4BlockOutputStream} writes the end block), while lz4-java's own reader takes
 * an end of input at or even inside a header for the end of the data, silently losing whatever was
 * cut off.
 *
 * <p>Failures are {@link Lz4FramingException}s naming the block (its index among all the blocks
 * read, end blocks included, and the offset of its header in the compressed input) and what was
 * wrong. After a failure the stream only reports that it failed.
 *
 * <p>A read that asks for at least a whole block gets it decompressed straight into the caller's
 * array, or into the caller's direct buffer ({@link BufferReadable}: a decode's Arrow buffers);
 * smaller reads are served from a block buffer sized by the blocks seen (grown only when a bigger
 * block arrives). Over an {@link ArrayInputStream} (a broadcast held in memory) an lz4 block is
 * decompressed from the input's array in place, once the array is seen to hold all of it. Otherwise
 * buffers for a block's stored bytes grow as those bytes arrive, so a length the input does not
 * back costs at most about twice the bytes that exist; a buffer for an lz4 block's decompressed
 * bytes is sized only once its compressed bytes have all arrived. Compressed bytes are read with
 * {@link PiecewiseReads#readFully}, never with {@code available()}. Not thread-safe.
 */
final class SparkLz4InputStream extends InputStream implements BufferReadable {

  private static final byte[] MAGIC = {'L', 'Z', '4', 'B', 'l', 'o', 'c', 'k'};

  /** Magic, token, compressed length, decompressed length, checksum. */
  static final int HEADER_LENGTH = MAGIC.length + 1 + 4 + 4 + 4;

  static final int METHOD_RAW = 0x10;
  static final int METHOD_LZ4 = 0x20;

  /** A token's level {@code L} (0 to 15) allows blocks of up to {@code 2^(LEVEL_BASE + L)}. */
  private static final int LEVEL_BASE = 10;

  /** The seed Spark gives the xxhash32 checksums of its lz4 blocks. */
  static final int CHECKSUM_SEED = 0x9747b28c;

  /**
   * The header holds the low 28 bits of the xxhash32: lz4-java's writer takes its checksum from
   * {@code StreamingXXHash32.asChecksum()}, whose {@code getValue()} masks the hash so.
   */
  private static final int CHECKSUM_MASK = 0x0fffffff;

  /** The safest lz4 decompressor this JVM has (see {@link SafeLz4}). */
  private static final LZ4SafeDecompressor DECOMPRESSOR = SafeLz4.decompressor();

  /** Hashing only reads the range it is given, which every instance checks first. */
  private static final XXHash32 CHECKSUM = XXHashFactory.fastestInstance().hash32();

  private static final byte[] EMPTY = new byte[0];

  /** The first size a buffer grows to while bytes arrive (a block of at most this is one array). */
  private static final int MIN_GROWTH = PiecewiseReads.PIECE_SIZE;

  private final InputStream in;

  /** {@code in} when its bytes are in an array that blocks can be decompressed from in place. */
  private final ArrayInputStream arrayIn;

  private final byte[] header = new byte[HEADER_LENGTH];
  private byte[] compressed = EMPTY;

  /** Where the current lz4 block's compressed bytes are, once located. */
  private byte[] compressedArray = EMPTY;

  private int compressedOffset;

  /** {@code compressedArray} as a buffer, for decompressing into direct memory. */
  private ByteBuffer compressedBuffer = ByteBuffer.wrap(EMPTY);

  /** Decompressed bytes of the current block not yet read: {@code block[blockPos, blockEnd)}. */
  private byte[] block = EMPTY;

  private int blockPos;
  private int blockEnd;

  /** Offset in the compressed input of the next byte read from {@code in}. */
  private long inputOffset;

  /** The index the next block header will have. */
  private long nextBlockIndex;

  /** True at the very start and right after an end block: where an end of input ends the data. */
  private boolean atStreamBoundary = true;

  private boolean endOfData;
  private boolean failed;
  private boolean closed;

  // The current data block's header, once checked.
  private long blockIndex;
  private long blockOffset;
  private int method;
  private int maxBlockSize;
  private int compressedLength;
  private int decompressedLength;
  private int expectedChecksum;

  SparkLz4InputStream(InputStream in) {
    this.in = Objects.requireNonNull(in, "in");
    this.arrayIn = in instanceof ArrayInputStream ? (ArrayInputStream) in : null;
  }

  @Override
  public int read() throws IOException {
    ensureReadable();
    if (blockPos == blockEnd) {
      try {
        if (!nextDataBlock()) {
          return -1;
        }
        bufferBlock();
      } catch (IOException | RuntimeException e) {
        failed = true;
        throw e;
      }
    }
    return block[blockPos++] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    ensureReadable();
    return len == 0 ? 0 : readInto(ByteBuffer.wrap(b, off, len));
  }

  /**
   * Reads into a direct buffer as {@link #read(byte[], int, int)} does into an array: a whole block
   * straight into it when it has room for one.
   */
  @Override
  public int read(ByteBuffer dst) throws IOException {
    ensureReadable();
    return dst.hasRemaining() ? readInto(dst) : 0;
  }

  /** Reads into {@code dst}, which has room: either decoding a whole block into it or copying. */
  private int readInto(ByteBuffer dst) throws IOException {
    try {
      if (blockPos == blockEnd) {
        if (!nextDataBlock()) {
          return -1;
        }
        if (dst.remaining() >= decompressedLength) {
          // The hot path: the whole block straight into the caller's memory, no copy.
          decodeBlockInto(dst);
          return decompressedLength;
        }
        bufferBlock();
      }
      int n = Math.min(dst.remaining(), blockEnd - blockPos);
      dst.put(block, blockPos, n);
      blockPos += n;
      return n;
    } catch (IOException | RuntimeException e) {
      failed = true;
      throw e;
    }
  }

  /** The decompressed bytes already buffered; never reads from the input. */
  @Override
  public int available() throws IOException {
    ensureReadable();
    return blockEnd - blockPos;
  }

  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      block = EMPTY;
      compressed = EMPTY;
      compressedArray = EMPTY;
      compressedBuffer = ByteBuffer.wrap(EMPTY);
      blockPos = 0;
      blockEnd = 0;
      in.close();
    }
  }

  private void ensureReadable() throws IOException {
    if (closed) {
      throw new IOException("the Spark lz4 stream is closed");
    }
    if (failed) {
      throw new IOException("the Spark lz4 stream failed before; it cannot be read further");
    }
  }

  /**
   * Reads and checks block headers up to the next block that holds data, skipping end blocks.
   *
   * @return false at the end of the data (see the class comment for when that is)
   */
  private boolean nextDataBlock() throws IOException {
    while (!endOfData) {
      long index = nextBlockIndex;
      long offset = inputOffset;
      int n = PiecewiseReads.readFully(in, header, 0, HEADER_LENGTH);
      inputOffset += n;
      if (n == 0 && atStreamBoundary) {
        endOfData = true;
        return false;
      }
      if (n == 0) {
        throw corrupt(
            index,
            offset,
            "the input ends after a data block, without the end block of its stream (truncated)");
      }
      if (n < HEADER_LENGTH) {
        throw corrupt(
            index,
            offset,
            "the input ends inside the block header (truncated): "
                + n
                + " of "
                + HEADER_LENGTH
                + " bytes");
      }
      nextBlockIndex++;
      if (checkHeader(index, offset)) {
        atStreamBoundary = false;
        return true;
      }
      atStreamBoundary = true;
    }
    return false;
  }

  /**
   * Checks the header just read, before anything is allocated for its block.
   *
   * @return true for a data block (its fields are then the current block's), false for an end block
   */
  private boolean checkHeader(long index, long offset) throws Lz4FramingException {
    for (int i = 0; i < MAGIC.length; i++) {
      if (header[i] != MAGIC[i]) {
        throw corrupt(
            index,
            offset,
            "bad magic "
                + hex(header, 0, MAGIC.length)
                + ", expected "
                + hex(MAGIC, 0, MAGIC.length)
                + " (\"LZ4Block\")");
      }
    }
    int token = header[MAGIC.length] & 0xff;
    int tokenMethod = token & 0xf0;
    int level = token & 0x0f;
    int maxLength = 1 << (LEVEL_BASE + level);
    int compressedLen = intLE(header, MAGIC.length + 1);
    int decompressedLen = intLE(header, MAGIC.length + 5);
    int checksum = intLE(header, MAGIC.length + 9);
    if (tokenMethod != METHOD_RAW && tokenMethod != METHOD_LZ4) {
      throw corrupt(
          index,
          offset,
          String.format(
              "bad token 0x%02x: compression method 0x%02x, expected 0x%02x (raw) or 0x%02x (lz4)",
              token, tokenMethod, METHOD_RAW, METHOD_LZ4));
    }
    if (decompressedLen < 0 || decompressedLen > maxLength) {
      throw corrupt(
          index,
          offset,
          String.format(
              "decompressed length %d, expected 0 to %d (the block size of the token's level %d)",
              decompressedLen, maxLength, level));
    }
    if (compressedLen < 0) {
      throw corrupt(index, offset, "compressed length " + compressedLen + ", expected 0 or more");
    }
    if (compressedLen == 0 || decompressedLen == 0) {
      if (compressedLen != decompressedLen) {
        throw corrupt(
            index,
            offset,
            String.format(
                "compressed length %d with decompressed length %d: only an end block is empty,"
                    + " with both 0",
                compressedLen, decompressedLen));
      }
      if (checksum != 0) {
        throw corrupt(
            index, offset, String.format("end block with checksum 0x%08x, expected 0", checksum));
      }
      return false;
    }
    if (tokenMethod == METHOD_RAW && compressedLen != decompressedLen) {
      throw corrupt(
          index,
          offset,
          String.format(
              "raw block with compressed length %d, expected its decompressed length %d",
              compressedLen, decompressedLen));
    }
    if (tokenMethod == METHOD_LZ4 && compressedLen > maxCompressedLength(decompressedLen)) {
      throw corrupt(
          index,
          offset,
          String.format(
              "compressed length %d, expected at most %d (the most lz4 takes for %d bytes)",
              compressedLen, maxCompressedLength(decompressedLen), decompressedLen));
    }
    blockIndex = index;
    blockOffset = offset;
    method = tokenMethod;
    maxBlockSize = maxLength;
    compressedLength = compressedLen;
    decompressedLength = decompressedLen;
    expectedChecksum = checksum;
    return true;
  }

  /** Decodes the current block into the block buffer, for reads smaller than a block. */
  private void bufferBlock() throws IOException {
    blockPos = 0;
    blockEnd = 0;
    if (method == METHOD_RAW) {
      block = readGrowing(block, decompressedLength);
    } else {
      locateCompressed();
      if (block.length < decompressedLength) {
        block = new byte[grow(block.length, decompressedLength, maxBlockSize)];
      }
      decompress(block, null, 0);
    }
    verifyChecksum(block, 0);
    blockEnd = decompressedLength;
  }

  /**
   * Decodes the current block into {@code dest} (an array's or direct memory) at its position,
   * which it advances; {@code dest} has room for all of it.
   */
  private void decodeBlockInto(ByteBuffer dest) throws IOException {
    int at = dest.position();
    if (method == METHOD_RAW) {
      ByteBuffer target = dest.duplicate();
      target.limit(at + decompressedLength);
      int n = PiecewiseReads.readFully(in, target);
      inputOffset += n;
      if (n < decompressedLength) {
        throw truncatedBlock(n, decompressedLength);
      }
    } else {
      locateCompressed();
      decompress(null, dest, at);
    }
    int checksum = CHECKSUM.hash(dest, at, decompressedLength, CHECKSUM_SEED) & CHECKSUM_MASK;
    checkChecksum(checksum);
    dest.position(at + decompressedLength);
  }

  /**
   * Finds the current lz4 block's compressed bytes: in the input's own array when it is one, which
   * must hold all of them; otherwise read into the compressed buffer.
   */
  private void locateCompressed() throws IOException {
    if (arrayIn == null) {
      compressed = readGrowing(compressed, compressedLength);
      useCompressed(compressed, 0);
      return;
    }
    int unread = arrayIn.available();
    if (unread < compressedLength) {
      arrayIn.consume(unread);
      inputOffset += unread;
      throw truncatedBlock(unread, compressedLength);
    }
    useCompressed(arrayIn.array(), arrayIn.position());
    arrayIn.consume(compressedLength);
    inputOffset += compressedLength;
  }

  private void useCompressed(byte[] array, int offset) {
    if (array != compressedArray) {
      compressedArray = array;
      compressedBuffer = ByteBuffer.wrap(array);
    }
    compressedOffset = offset;
  }

  /**
   * Reads the current block's next {@code len} bytes into {@code buf[0, len)}, growing {@code buf}
   * (doubling) as the bytes arrive rather than to the length the header claims, so that a claim the
   * input does not back costs at most about twice the bytes that exist.
   *
   * @return {@code buf}, or the bigger array that replaced it
   */
  private byte[] readGrowing(byte[] buf, int len) throws IOException {
    int have = 0;
    while (have < len) {
      if (have == buf.length) {
        buf = Arrays.copyOf(buf, (int) Math.min(len, Math.max(MIN_GROWTH, 2L * buf.length)));
      }
      int want = Math.min(len, buf.length) - have;
      int n = PiecewiseReads.readFully(in, buf, have, want);
      inputOffset += n;
      have += n;
      if (n < want) {
        throw truncatedBlock(have, len);
      }
    }
    return buf;
  }

  /** Decompresses the located block into {@code destArray} or else {@code destBuffer}. */
  private void decompress(byte[] destArray, ByteBuffer destBuffer, int destOff)
      throws Lz4FramingException {
    int produced;
    try {
      produced =
          destArray != null
              ? DECOMPRESSOR.decompress(
                  compressedArray,
                  compressedOffset,
                  compressedLength,
                  destArray,
                  destOff,
                  decompressedLength)
              : DECOMPRESSOR.decompress(
                  compressedBuffer,
                  compressedOffset,
                  compressedLength,
                  destBuffer,
                  destOff,
                  decompressedLength);
    } catch (LZ4Exception | IndexOutOfBoundsException e) {
      throw new Lz4FramingException(
          describe(
              blockIndex,
              blockOffset,
              // Not lz4-java's message: its offsets count from the start of whatever array held
              // the block (the input's own, read in place, or a copy), so they would differ by how
              // the block was read. It stays the cause.
              "the lz4 data does not decompress to the declared "
                  + decompressedLength
                  + " bytes of its "
                  + compressedLength
                  + " compressed bytes"),
          blockIndex,
          blockOffset,
          e);
    }
    if (produced != decompressedLength) {
      throw corrupt(
          blockIndex,
          blockOffset,
          "decompressed to " + produced + " bytes, expected " + decompressedLength);
    }
  }

  private void verifyChecksum(byte[] data, int off) throws Lz4FramingException {
    checkChecksum(CHECKSUM.hash(data, off, decompressedLength, CHECKSUM_SEED) & CHECKSUM_MASK);
  }

  private void checkChecksum(int checksum) throws Lz4FramingException {
    if (checksum != expectedChecksum) {
      throw corrupt(
          blockIndex,
          blockOffset,
          String.format(
              "checksum of the decompressed block 0x%08x, expected 0x%08x",
              checksum, expectedChecksum));
    }
  }

  private Lz4FramingException truncatedBlock(int read, int length) {
    return corrupt(
        blockIndex,
        blockOffset,
        "the input ends inside the block (truncated): " + read + " of " + length + " bytes");
  }

  private static int grow(int current, int needed, int limit) {
    // Doubling up to the largest block the level allows keeps reallocations few.
    return (int) Math.max(needed, Math.min(limit, 2L * current));
  }

  /** liblz4's {@code LZ4_COMPRESSBOUND}: the most an lz4 block of {@code n} bytes takes. */
  private static long maxCompressedLength(int n) {
    return n + n / 255L + 16;
  }

  private static int intLE(byte[] b, int at) {
    return (b[at] & 0xff)
        | (b[at + 1] & 0xff) << 8
        | (b[at + 2] & 0xff) << 16
        | (b[at + 3] & 0xff) << 24;
  }

  private static String hex(byte[] b, int off, int len) {
    StringBuilder s = new StringBuilder(2 * len);
    for (int i = off; i < off + len; i++) {
      s.append(String.format("%02x", b[i] & 0xff));
    }
    return s.toString();
  }

  private static Lz4FramingException corrupt(long index, long offset, String what) {
    return new Lz4FramingException(describe(index, offset, what), index, offset);
  }

  private static String describe(long index, long offset, String what) {
    return "Corrupt Spark lz4 stream at block " + index + " (offset " + offset + "): " + what;
  }
}
