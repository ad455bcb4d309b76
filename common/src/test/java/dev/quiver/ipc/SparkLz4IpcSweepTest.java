package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.allRows;
import static dev.quiver.ipc.IpcTestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.Lz4FramingException;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.TestData;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every byte of Spark-lz4 IPC streams of every supported type, flipped with several masks: the
 * decode ends in an {@link IpcFormatException} or in the original rows, and leaks nothing.
 */
@ExtendWith(AllocatorExtension.class)
class SparkLz4IpcSweepTest {

  private static final int[] MASKS = {0x01, 0x40, 0xff};

  private BufferAllocator allocator;

  @BeforeEach
  void useTheTestsAllocator(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  @ParameterizedTest
  @ValueSource(strings = {"all types", "build side"})
  void everyFlippedByteIsReportedOrHarmless(String shape) throws IOException {
    byte[] stream;
    List<String> expected;
    // Small streams keep the sweep to a few seconds: one batch of every type, two of the build
    // side.
    try (VectorSchemaRoot root =
        shape.equals("all types")
            ? TestData.allTypes(allocator, 8, 7)
            : TestData.buildSide(allocator, 100, 40)) {
      List<VectorSchemaRoot> batches =
          shape.equals("all types") ? Arrays.asList(root) : Arrays.asList(root, root);
      stream =
          IpcTestSupport.encodeBatches(
              root.getSchema(), batches, null, SparkStreamCodec.LZ4, allocator);
      expected = new ArrayList<>();
      for (int i = 0; i < batches.size(); i++) {
        expected.addAll(rows(root));
      }
    }
    int reported = 0;
    int framing = 0;
    for (int at = 0; at < stream.length; at++) {
      for (int mask : MASKS) {
        byte[] damaged = stream.clone();
        damaged[at] ^= (byte) mask;
        String source = shape + ", flip " + mask + " at " + at;
        try (DecodedStream decoded =
            ArrowIpc.decode(damaged, SparkStreamCodec.LZ4, allocator, source)) {
          // Only a flip that leaves the bytes lz4 gives back the same can get this far.
          assertEquals(expected, allRows(decoded, allocator), source + " decoded to other rows");
        } catch (IpcFormatException e) {
          assertTrue(e.getMessage().contains(source), e.getMessage());
          reported++;
          if (e.getCause() instanceof Lz4FramingException) {
            framing++;
          }
        } finally {
          assertEquals(0, allocator.getAllocatedMemory(), source + " leaked");
        }
      }
    }
    // The checksums see every change to the IPC bytes, so the framing reports nearly every flip.
    assertTrue(framing > reported * 9 / 10, framing + " of " + reported + " from the framing");
  }
}
