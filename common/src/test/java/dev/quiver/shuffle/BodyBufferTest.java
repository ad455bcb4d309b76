package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.TrickleInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The reused body buffer: sized to the body, reused while bodies fit, grown as bytes arrive. */
class BodyBufferTest {

  private final byte[] data = new byte[3 * BodyBuffer.TRUSTED_LENGTH + 123];

  BodyBufferTest() {
    new Random(5).nextBytes(data);
  }

  @Test
  void reusesTheBufferWhileBodiesFit() throws IOException {
    BodyBuffer buffer = new BodyBuffer(true);
    ByteBuffer first = buffer.fill(new ByteArrayInputStream(data), 1000);
    assertTrue(first.isDirect());
    assertEquals(1000, first.capacity(), "a body under the trusted length is allocated exactly");
    assertSame(first, buffer.fill(new ByteArrayInputStream(data, 5, 900), 900));
    assertEquals(ByteBuffer.wrap(data, 5, 900), first);
    ByteBuffer larger = buffer.fill(new ByteArrayInputStream(data), 1500);
    assertEquals(2000, larger.capacity(), "growth doubles");
    assertSame(larger, buffer.fill(new ByteArrayInputStream(data), 1900));
  }

  @Test
  void bodiesBeyondTheTrustedLengthArriveWhole() throws IOException {
    for (boolean direct : new boolean[] {true, false}) {
      BodyBuffer buffer = new BodyBuffer(direct);
      ByteBuffer body = buffer.fill(new ByteArrayInputStream(data), data.length);
      assertEquals(direct, body.isDirect());
      assertEquals(0, body.position());
      assertEquals(ByteBuffer.wrap(data), body);
    }
  }

  @Test
  void shortStreamFillsWhatItHoldsWithoutAllocatingTheClaim() throws IOException {
    BodyBuffer buffer = new BodyBuffer(false);
    int held = BodyBuffer.TRUSTED_LENGTH + 10;
    ByteBuffer body = buffer.fill(new ByteArrayInputStream(data, 0, held), Integer.MAX_VALUE - 100);
    assertEquals(held, body.remaining());
    assertEquals(ByteBuffer.wrap(data, 0, held), body);
    assertTrue(buffer.capacity() <= 2 * held, "capacity " + buffer.capacity());
  }

  @Test
  void shortReadsStillFillTheBody() throws IOException {
    BodyBuffer buffer = new BodyBuffer(true);
    ByteBuffer body =
        buffer.fill(new TrickleInputStream(new ByteArrayInputStream(data, 0, 3000)), 3000);
    assertEquals(ByteBuffer.wrap(data, 0, 3000), body);
  }

  @Test
  void emptyBody() throws IOException {
    BodyBuffer buffer = new BodyBuffer(true);
    assertEquals(0, buffer.fill(new ByteArrayInputStream(data), 0).remaining());
  }
}
