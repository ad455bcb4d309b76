package dev.quiver.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.shuffle.BlockCodec;
import dev.quiver.testing.Bytes;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.MemoryProbe;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingSupplier;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyFramedOutputStream;
import org.xerial.snappy.SnappyInputStream;

/**
 * Quiver's Snappy readers (Spark's snappy codec format, and the framing format of SNAP blocks):
 * they read what snappy-java writes, and a hostile chunk length or declared uncompressed length
 * costs no allocation beyond the bytes that exist.
 */
class HostileSnappyTest {

  private static final long ONE_MIB = 1 << 20;

  /** snappy-java's stream header: magic, version 1, compatible version 1. */
  private static final byte[] HEADER = {
    (byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1
  };

  @Test
  void readsWhatSparksSnappyCodecWritesIncludingConcatenatedStreams() throws IOException {
    byte[] data = sample(300_000);
    byte[] one = sparkSnappy(data);
    assertArrayEquals(data, readAll(SparkStreamCodec.SNAPPY.decompress(in(one))));
    byte[] two = Bytes.concat(one, sparkSnappy(data));
    assertArrayEquals(Bytes.concat(data, data), readAll(SnappyStreams.sparkStream(in(two))));
    assertArrayEquals(new byte[0], readAll(SnappyStreams.sparkStream(in(new byte[0]))));
    assertArrayEquals(new byte[0], readAll(SnappyStreams.sparkStream(in(HEADER))));
  }

  @Test
  void readsTheFramingFormatSnappyJavaWrites() throws IOException {
    byte[] data = sample(300_000);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream framed = new SnappyFramedOutputStream(out)) {
      framed.write(data);
    }
    assertArrayEquals(data, readAll(SnappyStreams.framed(in(out.toByteArray()))));
    assertArrayEquals(data, readAll(BlockCodec.SNAPPY.decompress(in(out.toByteArray()))));
  }

  /**
   * A chunk length near 512 MiB on a stream that holds 100 bytes: snappy-java's reader allocates
   * the length first (shown on a 32 MiB length, to keep the test's heap small); Quiver's grows as
   * bytes arrive and fails naming the chunk.
   */
  @Test
  void aHostileChunkLengthCostsNoBigAllocation() throws IOException {
    byte[] small = Bytes.concat(HEADER, bigEndian(32 << 20), new byte[100]);
    long before = MemoryProbe.threadHeapAllocated();
    assertThrows(IOException.class, () -> readAll(new SnappyInputStream(in(small))));
    long snappyJava = MemoryProbe.threadHeapAllocated() - before;
    if (before >= 0) {
      assertTrue(snappyJava >= 32 << 20, "snappy-java allocated only " + snappyJava);
    }

    byte[] hostile = Bytes.concat(HEADER, bigEndian((512 << 20) - 1), new byte[100]);
    assertRefusedBeforeAllocating(
        EOFException.class,
        () -> SnappyStreams.sparkStream(in(hostile)),
        "The snappy-java stream ended inside chunk 1 (which starts at stream offset 16):"
            + " reading the chunk's compressed bytes needed 536870911 bytes, got 100");
  }

  /** A 5-byte chunk whose varint declares 1 GiB: refused before the output is allocated. */
  @Test
  void aHostileUncompressedLengthIsRefusedBeforeAllocating() throws IOException {
    byte[] varint = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x04, 0, 0, 0};
    byte[] hostile = Bytes.concat(HEADER, bigEndian(varint.length), varint);
    assertRefusedBeforeAllocating(
        IOException.class,
        () -> SnappyStreams.sparkStream(in(hostile)),
        "Corrupt snappy-java stream: chunk 1 at stream offset 16: it declares 1073741824"
            + " uncompressed bytes, more than its 8 compressed bytes can hold (at most"
            + " 171)");
  }

  @Test
  void aStreamWithoutTheHeaderIsRefused() {
    byte[] raw = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    IOException e =
        assertThrows(IOException.class, () -> readAll(SnappyStreams.sparkStream(in(raw))));
    assertTrue(e.getMessage().contains("does not start with snappy-java's stream header"));
  }

  @Test
  void aFramedChunkOverTheFormatsLimitIsRefusedBeforeReading() throws IOException {
    byte[] hostile =
        Bytes.concat(identifier(), new byte[] {0x00, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
    assertRefusedBeforeAllocating(
        IOException.class,
        () -> SnappyStreams.framed(in(hostile)),
        "Corrupt Snappy framed stream: chunk 1 at stream offset 10: compressed chunk"
            + " length 16777215 is outside the format's 4 to 76494");
  }

  @Test
  void aFramedChunkDeclaringMoreThan64KiBIsRefused() throws IOException {
    byte[] compressed = Snappy.compress(new byte[70_000]);
    byte[] chunk = framedChunk(0x00, crc(new byte[70_000]), compressed);
    IOException e =
        assertThrows(
            IOException.class,
            () -> readAll(SnappyStreams.framed(in(Bytes.concat(identifier(), chunk)))));
    assertTrue(e.getMessage().contains("it declares 70000 uncompressed bytes"), e.getMessage());
  }

  @Test
  void aFramedChecksumMismatchIsRefused() throws IOException {
    byte[] data = sample(1000);
    byte[] chunk = framedChunk(0x00, crc(data) ^ 1, Snappy.compress(data));
    IOException e =
        assertThrows(
            IOException.class,
            () -> readAll(SnappyStreams.framed(in(Bytes.concat(identifier(), chunk)))));
    assertTrue(e.getMessage().endsWith("its checksum does not match its data"), e.getMessage());
  }

  /**
   * Reads the stream {@code open} returns, expecting it refused with exactly {@code message}, and
   * checks that the refusal came before any large allocation.
   */
  private static void assertRefusedBeforeAllocating(
      Class<? extends IOException> refusal, ThrowingSupplier<InputStream> open, String message) {
    long before = MemoryProbe.threadHeapAllocated();
    IOException e = assertThrows(refusal, () -> readAll(open.get()));
    assertSmallAllocation(before);
    assertTrue(e.getMessage().equals(message), e.getMessage());
  }

  private static void assertSmallAllocation(long before) {
    if (before < 0) {
      return;
    }
    long allocated = MemoryProbe.threadHeapAllocated() - before;
    assertTrue(allocated < ONE_MIB, "allocated " + allocated + " bytes");
  }

  private static byte[] identifier() {
    return new byte[] {(byte) 0xFF, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'};
  }

  private static byte[] framedChunk(int type, int maskedCrc, byte[] data) {
    int length = data.length + 4;
    return Bytes.concat(
        new byte[] {(byte) type, (byte) length, (byte) (length >>> 8), (byte) (length >>> 16)},
        ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(maskedCrc).array(),
        data);
  }

  private static int crc(byte[] data) {
    CRC32C crc = new CRC32C();
    crc.update(data, 0, data.length);
    int value = (int) crc.getValue();
    return ((value >>> 15) | (value << 17)) + 0xA282EAD8;
  }

  private static byte[] bigEndian(int value) {
    return ByteBuffer.allocate(4).putInt(value).array();
  }

  private static byte[] sparkSnappy(byte[] data) throws IOException {
    return Codecs.compress(SparkStreamCodec.SNAPPY, data);
  }

  /** Compressible but not trivial. */
  private static byte[] sample(int n) {
    byte[] data = new byte[n];
    Random random = new Random(7);
    for (int i = 0; i < n; i++) {
      data[i] = (byte) (random.nextInt(16) + (i / 1000));
    }
    return data;
  }

  private static InputStream in(byte[] bytes) {
    return new ByteArrayInputStream(bytes);
  }

  private static byte[] readAll(InputStream in) throws IOException {
    try (InputStream stream = in) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      int n;
      while ((n = stream.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
      }
      return out.toByteArray();
    }
  }
}
