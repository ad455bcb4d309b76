package dev.quiver.io;

import dev.quiver.annotation.Internal;
import java.io.ByteArrayInputStream;

/**
 * A {@link ByteArrayInputStream} whose unread bytes a reader may use in place: a decompressor
 * reading a broadcast held in memory decompresses straight from the array instead of copying each
 * block out of it first.
 */
@Internal
public final class ArrayInputStream extends ByteArrayInputStream {

  public ArrayInputStream(byte[] bytes) {
    super(bytes);
  }

  public ArrayInputStream(byte[] bytes, int offset, int length) {
    super(bytes, offset, length);
  }

  /** The array the unread bytes are in; read it, do not write it. */
  public byte[] array() {
    return buf;
  }

  /** The index in {@link #array()} of the next unread byte. */
  public synchronized int position() {
    return pos;
  }

  /** Marks the next {@code n} unread bytes read, as a reader used them in place. */
  public synchronized void consume(int n) {
    if (n < 0 || n > count - pos) {
      throw new IndexOutOfBoundsException(
          "cannot consume " + n + " bytes of the " + (count - pos) + " unread");
    }
    pos += n;
  }
}
