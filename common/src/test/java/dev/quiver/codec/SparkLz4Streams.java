package dev.quiver.codec;

import dev.quiver.testing.Bytes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jpountz.lz4.LZ4BlockOutputStream;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.xxhash.XXHashFactory;

/** Spark lz4 streams written by lz4-java itself, and a walk over their block headers. */
final class SparkLz4Streams {

  private SparkLz4Streams() {}

  /** {@code data} as lz4-java's {@code LZ4BlockOutputStream} writes it under Spark's codec. */
  static byte[] write(byte[] data, int blockSize) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (OutputStream out = open(bytes, blockSize)) {
      out.write(data);
    }
    return bytes.toByteArray();
  }

  /** Spark's {@code LZ4CompressionCodec.compressedOutputStream} with {@code blockSize}. */
  static OutputStream open(OutputStream out, int blockSize) {
    return new LZ4BlockOutputStream(
        out,
        blockSize,
        LZ4Factory.fastestInstance().fastCompressor(),
        XXHashFactory.fastestInstance()
            .newStreamingHash32(SparkLz4InputStream.CHECKSUM_SEED)
            .asChecksum(),
        true);
  }

  /** {@code length} bytes of repetitive text with some noise: lz4 compresses every block. */
  static byte[] compressible(int length, long seed) {
    Random random = new Random(seed);
    byte[] data = new byte[length];
    for (int i = 0; i < length; i++) {
      data[i] = (byte) (i % 97 == 0 ? random.nextInt(256) : 'a' + (i / 13) % 7);
    }
    return data;
  }

  /** Alternating runs of noise and text: raw and lz4 blocks in one stream. */
  static byte[] mixed(int length, int runLength, long seed) {
    byte[] data = compressible(length, seed);
    // Noise: lz4 stores such blocks raw.
    byte[] noise = Bytes.random(length, seed + 1);
    for (int start = 0; start < length; start += 2 * runLength) {
      System.arraycopy(noise, start, data, start, Math.min(runLength, length - start));
    }
    return data;
  }

  /** A block header as it sits in a stream. */
  static final class Header {
    final int offset;
    final int token;
    final int compressedLength;
    final int decompressedLength;

    Header(int offset, int token, int compressedLength, int decompressedLength) {
      this.offset = offset;
      this.token = token;
      this.compressedLength = compressedLength;
      this.decompressedLength = decompressedLength;
    }

    int method() {
      return token & 0xf0;
    }

    boolean isEnd() {
      return compressedLength == 0 && decompressedLength == 0;
    }
  }

  /** The headers of a well-formed stream (or concatenation), in order. */
  static List<Header> headers(byte[] stream) {
    List<Header> headers = new ArrayList<>();
    ByteBuffer buffer = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    int at = 0;
    while (at < stream.length) {
      Header header =
          new Header(at, stream[at + 8] & 0xff, buffer.getInt(at + 9), buffer.getInt(at + 13));
      headers.add(header);
      at += SparkLz4InputStream.HEADER_LENGTH + header.compressedLength;
    }
    return headers;
  }

  /** Reads {@code in} to its end in reads of at most {@code readSize} bytes (1: {@code read()}). */
  static byte[] readAll(InputStream in, int readSize) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (readSize == 1) {
      int b;
      while ((b = in.read()) >= 0) {
        out.write(b);
      }
      return out.toByteArray();
    }
    byte[] buffer = new byte[readSize];
    int n;
    while ((n = in.read(buffer, 0, readSize)) >= 0) {
      out.write(buffer, 0, n);
    }
    return out.toByteArray();
  }
}
