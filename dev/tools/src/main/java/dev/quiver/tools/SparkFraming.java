package dev.quiver.tools;

import dev.quiver.codec.SparkStreamCodec;
import java.nio.charset.StandardCharsets;

/**
 * What the dump tells about each of Spark's {@code spark.io.compression.codec} framings: a line
 * describing it, and the bytes its streams start with (to say, when a file fails to decode, whether
 * it was such a stream at all).
 */
// Immutable in fact: the magic arrays are never written, and the codecs are stateless constants.
@SuppressWarnings("ImmutableEnumChecker")
enum SparkFraming {
  LZ4(
      SparkStreamCodec.LZ4,
      "Spark's lz4 codec: LZ4Block framing, xxhash32 block checksums",
      "LZ4Block".getBytes(StandardCharsets.US_ASCII)),
  ZSTD(
      SparkStreamCodec.ZSTD,
      "Spark's zstd codec: zstd frames",
      new byte[] {0x28, (byte) 0xB5, 0x2F, (byte) 0xFD}),
  SNAPPY(
      SparkStreamCodec.SNAPPY,
      "Spark's snappy codec: snappy-java stream format",
      new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}),
  // An uncompressed value is the IPC stream itself: its first message starts with the continuation
  // token.
  NONE(SparkStreamCodec.NONE, "uncompressed", new byte[] {-1, -1, -1, -1});

  private final SparkStreamCodec codec;
  private final String description;
  private final byte[] magic;

  SparkFraming(SparkStreamCodec codec, String description, byte[] magic) {
    this.codec = codec;
    this.description = description;
    this.magic = magic;
  }

  /** The framing of {@code codec}, one of {@link SparkStreamCodec}'s four. */
  static SparkFraming of(SparkStreamCodec codec) {
    for (SparkFraming framing : values()) {
      if (framing.codec == codec) {
        return framing;
      }
    }
    throw new IllegalArgumentException("no Spark framing for codec " + codec);
  }

  /** How the codec frames its bytes, for the dump's description of a file. */
  String description() {
    return description;
  }

  /** Whether {@code head} (a file's first bytes) starts as this codec's streams start. */
  boolean startsLikeStream(byte[] head) {
    if (head.length < magic.length) {
      return false;
    }
    for (int i = 0; i < magic.length; i++) {
      if (head[i] != magic[i]) {
        return false;
      }
    }
    return true;
  }
}
