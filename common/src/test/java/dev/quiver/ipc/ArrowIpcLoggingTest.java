package dev.quiver.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.AllocatorTestBase;
import dev.quiver.testing.LogCapture;
import dev.quiver.testing.TestData;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** The IPC decode says each stream at TRACE and leaves refusals to its callers. */
class ArrowIpcLoggingTest extends AllocatorTestBase {

  private LogCapture log;

  @BeforeEach
  void setUp() {
    log = LogCapture.of(ArrowIpc.class);
  }

  @AfterEach
  void tearDown() {
    log.close();
  }

  @Test
  void eachDecodedStreamIsATraceLineNamingItsSource() throws Exception {
    byte[] bytes =
        IpcTestSupport.streamOf(TestData.buildSide(allocator, 0, 250), SparkStreamCodec.LZ4);
    ArrowIpc.decode(bytes, SparkStreamCodec.LZ4, allocator, "broadcast 9, stream 0").close();

    List<String> trace = log.at(Level.TRACE);
    assertEquals(1, trace.size(), () -> log.events().toString());
    assertTrue(
        trace
            .get(0)
            .matches(
                "Decoded Arrow IPC stream \\(broadcast 9, stream 0\\) in \\d+ ms: \\d+ decompressed"
                    + " bytes, 250 rows in 1 record batch\\(es\\)"),
        trace.get(0));
    assertEquals(1, log.events().size(), () -> log.events().toString());
  }

  @Test
  void aRefusedStreamIsNotLoggedHere() throws Exception {
    byte[] bytes = IpcTestSupport.streamOf(TestData.buildSide(allocator, 0, 250), StreamCodec.NONE);
    byte[] cut = Arrays.copyOf(bytes, bytes.length - 9);
    assertThrows(
        IpcFormatException.class,
        () -> ArrowIpc.decode(cut, StreamCodec.NONE, allocator, "broadcast 9, stream 0"));
    assertTrue(log.events().isEmpty(), () -> "the caller logs the refusal: " + log.events());
  }
}
