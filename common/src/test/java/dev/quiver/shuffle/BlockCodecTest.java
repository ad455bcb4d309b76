package dev.quiver.shuffle;

import static dev.quiver.testing.Codecs.compress;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.Codecs;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class BlockCodecTest {

  @Test
  void tagsAreCometsTags() {
    assertArrayEquals(ascii("LZ4_"), BlockCodec.LZ4.tag());
    assertArrayEquals(ascii("ZSTD"), BlockCodec.ZSTD.tag());
    assertArrayEquals(ascii("SNAP"), BlockCodec.SNAPPY.tag());
    assertArrayEquals(ascii("NONE"), BlockCodec.NONE.tag());
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#blockCodecs")
  void lookupByTagFindsTheCodec(BlockCodec codec) throws IOException {
    assertSame(codec, BlockCodec.forTag(codec.tag()));
  }

  @Test
  void tagIsACopy() {
    BlockCodec.LZ4.tag()[0] = 'X';
    assertArrayEquals(ascii("LZ4_"), BlockCodec.LZ4.tag());
  }

  @Test
  void unknownTagIsCorruptionNamingTheTagAsTextAndHex() {
    ShuffleCorruptionException e =
        assertThrows(ShuffleCorruptionException.class, () -> BlockCodec.forTag(ascii("LZ5_")));
    assertTrue(e.getMessage().contains("\"LZ5_\""), e.getMessage());
    assertTrue(e.getMessage().contains("4C 5A 35 5F"), e.getMessage());
    assertEquals(-1, e.blockIndex(), "a bare lookup does not know where the tag was");
  }

  @Test
  void nonPrintableTagBytesAreEscaped() {
    ShuffleCorruptionException e =
        assertThrows(
            ShuffleCorruptionException.class,
            () -> BlockCodec.forTag(new byte[] {0, 'A', (byte) 0x7F, '"'}));
    assertTrue(e.getMessage().contains("\"\\x00A\\x7F\\x22\""), e.getMessage());
    assertTrue(e.getMessage().contains("00 41 7F 22"), e.getMessage());
  }

  @Test
  void lowerCaseTagIsNotACodec() {
    assertThrows(ShuffleCorruptionException.class, () -> BlockCodec.forTag(ascii("zstd")));
  }

  @Test
  void cometOffsetsAsLengthsTagNamesTheCometSetting() {
    byte[] tag = {(byte) 0xDA, 'S', 'T', 'D'};
    ShuffleCorruptionException e =
        assertThrows(ShuffleCorruptionException.class, () -> BlockCodec.forTag(tag));
    assertTrue(e.getMessage().contains("\\xDASTD"), e.getMessage());
    assertTrue(e.getMessage().contains("DA 53 54 44"), e.getMessage());
    assertTrue(
        e.getMessage().contains("spark.comet.shuffle.compression.offsetsAsLengths.enabled"),
        e.getMessage());
  }

  @Test
  void writtenTagsAreTheCodecsAndCometsZstdVariant() {
    Codecs.blockCodecs()
        .forEach(codec -> assertTrue(BlockCodec.isWrittenTag(codec.tag()), codec::toString));
    assertTrue(BlockCodec.isWrittenTag(new byte[] {(byte) 0xDA, 'S', 'T', 'D'}));
    for (String other : new String[] {"zstd", "LZ5_", "NONE ", "NON", ""}) {
      assertFalse(BlockCodec.isWrittenTag(ascii(other)), other);
    }
  }

  @ParameterizedTest
  @MethodSource("dev.quiver.testing.Codecs#blockCodecs")
  void compressThenDecompressGivesTheBytesBack(BlockCodec codec) throws IOException {
    // Compressible and incompressible halves, larger than one LZ4 frame block (64 KiB).
    byte[] data = new byte[300_000];
    new Random(3).nextBytes(data);
    Arrays.fill(data, 0, 150_000, (byte) 'q');
    assertArrayEquals(data, roundTrip(codec, data));
    assertArrayEquals(new byte[0], roundTrip(codec, new byte[0]));
  }

  @Test
  void compressedFormsAreTheCodecsOwn() throws IOException {
    // Magic numbers: LZ4 frame 04 22 4D 18, zstd frame 28 B5 2F FD, Snappy framing ff 06 00 00.
    byte[] data = ascii("some shuffle bytes");
    assertArrayEquals(
        new byte[] {0x04, 0x22, 0x4D, 0x18}, Arrays.copyOf(compress(BlockCodec.LZ4, data), 4));
    assertArrayEquals(
        new byte[] {0x28, (byte) 0xB5, 0x2F, (byte) 0xFD},
        Arrays.copyOf(compress(BlockCodec.ZSTD, data), 4));
    assertArrayEquals(
        new byte[] {(byte) 0xFF, 0x06, 0x00, 0x00},
        Arrays.copyOf(compress(BlockCodec.SNAPPY, data), 4));
    assertArrayEquals(data, compress(BlockCodec.NONE, data));
  }

  @Test
  void zstdLevelIsConfigurable() throws IOException {
    byte[] data = new byte[200_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) ((i * 31) % 251 ^ (i >> 9));
    }
    BlockCodec strong = BlockCodec.zstd(19);
    assertEquals(19, strong.zstdLevel());
    assertArrayEquals(ascii("ZSTD"), strong.tag());
    assertSame(BlockCodec.ZSTD, BlockCodec.zstd(BlockCodec.DEFAULT_ZSTD_LEVEL));
    assertNotEquals(compress(BlockCodec.ZSTD, data).length, compress(strong, data).length);
    assertArrayEquals(data, roundTrip(strong, data));
    assertThrows(IllegalArgumentException.class, () -> BlockCodec.zstd(23));
  }

  private static byte[] roundTrip(BlockCodec codec, byte[] data) throws IOException {
    byte[] compressed = compress(codec, data);
    try (InputStream in = codec.decompress(new ByteArrayInputStream(compressed))) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] piece = new byte[8192];
      for (int n; (n = in.read(piece)) >= 0; ) {
        out.write(piece, 0, n);
      }
      return out.toByteArray();
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
