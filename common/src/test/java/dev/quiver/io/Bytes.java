package dev.quiver.io;

import java.util.Random;

/** Deterministic test bytes. */
final class Bytes {

  private Bytes() {}

  static byte[] random(int length, long seed) {
    byte[] bytes = new byte[length];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }
}
