package dev.quiver.ipc;

import static dev.quiver.ipc.IpcTestSupport.encodeBatches;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.ActingInputStream;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

/**
 * A killed task's decode must stop with the JDK's interrupt exception, unwrapped, leaking nothing.
 */
class ArrowIpcInterruptTest extends AllocatorTestBase {

  @Test
  void decodeOnAnInterruptedThreadFailsWithClosedByInterrupt() throws Exception {
    byte[] stream = buildSideStream(1);
    Outcome outcome = decodeOnThread(() -> new ByteArrayInputStream(stream), true);
    assertInstanceOf(ClosedByInterruptException.class, outcome.failure);
    assertTrue(outcome.stillInterrupted, "the interrupt status must stay set for the caller");
    assertEquals(0, allocator.getAllocatedMemory());
  }

  @Test
  void interruptArrivingMidStreamReleasesTheBatchesAlreadyDecoded() throws Exception {
    byte[] stream = buildSideStream(8);
    // Interrupt once about half the stream has been handed out, as a task kill would.
    Outcome outcome =
        decodeOnThread(
            () ->
                new ActingInputStream(
                    new ByteArrayInputStream(stream),
                    stream.length / 2 + 1,
                    Integer.MAX_VALUE,
                    () -> Thread.currentThread().interrupt()),
            false);
    assertInstanceOf(ClosedByInterruptException.class, outcome.failure);
    assertTrue(outcome.stillInterrupted);
    assertEquals(0, allocator.getAllocatedMemory());
  }

  /** An LZ4 stream of {@code batches} build-side batches of 2,000 rows each. */
  private byte[] buildSideStream(int batches) throws IOException {
    List<VectorSchemaRoot> roots = new ArrayList<>();
    try {
      for (int i = 0; i < batches; i++) {
        roots.add(TestData.buildSide(allocator, i * 2000L, 2000));
      }
      return encodeBatches(
          TestData.buildSideSchema(), roots, null, SparkStreamCodec.LZ4, allocator);
    } finally {
      roots.forEach(VectorSchemaRoot::close);
    }
  }

  private static final class Outcome {
    Throwable failure;
    boolean stillInterrupted;
  }

  private interface Source {
    InputStream open();
  }

  /** Decodes on a fresh thread (so the test thread's interrupt status is never touched). */
  private Outcome decodeOnThread(Source source, boolean interruptFirst)
      throws InterruptedException {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean interrupted = new AtomicBoolean();
    Thread decoder =
        new Thread(
            () -> {
              if (interruptFirst) {
                Thread.currentThread().interrupt();
              }
              try {
                ArrowIpc.decode(source.open(), SparkStreamCodec.LZ4, allocator, "interrupted")
                    .close();
              } catch (Throwable t) {
                failure.set(t);
              }
              interrupted.set(Thread.currentThread().isInterrupted());
            },
            "decoder");
    decoder.start();
    decoder.join();
    Outcome outcome = new Outcome();
    outcome.failure = failure.get();
    outcome.stillInterrupted = interrupted.get();
    return outcome;
  }
}
