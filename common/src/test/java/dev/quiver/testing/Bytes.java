package dev.quiver.testing;

import java.io.ByteArrayOutputStream;
import java.util.Random;

/** Test bytes: deterministic noise, and streams put together from parts. */
public final class Bytes {

  private Bytes() {}

  /** {@code length} bytes of noise from {@code seed}: the same bytes for the same seed. */
  public static byte[] random(int length, long seed) {
    byte[] bytes = new byte[length];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  /** The parts one after another. */
  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.write(part, 0, part.length);
    }
    return out.toByteArray();
  }
}
