package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The raw iterator hands every body in one direct buffer, replaced only when a body is larger. */
@ExtendWith(AllocatorExtension.class)
class RawBlockBufferReuseTest {

  @Test
  void oneDirectBufferServesEveryBlockThatFits(BufferAllocator allocator) throws IOException {
    byte[] stream;
    try (VectorSchemaRoot medium = TestData.buildSide(allocator, 0, 100);
        VectorSchemaRoot small = TestData.buildSide(allocator, 0, 10);
        VectorSchemaRoot large = TestData.buildSide(allocator, 0, 5000)) {
      stream = Blocks.write(BlockCodec.NONE, medium, small, large, small, medium);
    }
    try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(stream))) {
      ByteBuffer[] bodies = new ByteBuffer[5];
      for (int i = 0; i < bodies.length; i++) {
        assertTrue(raw.next());
        bodies[i] = raw.body();
        assertTrue(bodies[i].isDirect());
      }
      assertSame(bodies[0], bodies[1], "a smaller block reuses the buffer");
      assertNotSame(bodies[1], bodies[2], "a larger block grows it");
      assertSame(bodies[2], bodies[3]);
      assertSame(bodies[2], bodies[4]);
    }
  }

  @Test
  void bodyIsNotAvailableWithoutACurrentBlock() throws IOException {
    try (RawBlockIterator raw = new RawBlockIterator(new ByteArrayInputStream(new byte[0]))) {
      assertThrows(IllegalStateException.class, raw::body);
      assertTrue(!raw.next());
      assertThrows(IllegalStateException.class, raw::codec);
    }
  }
}
