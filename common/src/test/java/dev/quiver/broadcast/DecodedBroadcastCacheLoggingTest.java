package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.InMemoryBroadcast;
import dev.quiver.testing.LogCapture;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * What the cache logs: one INFO line per shared decode, DEBUG lines per task, one WARN line per
 * failed decode or refused broadcast, and INFO for each task that decodes for itself after a
 * failure. Recorded through {@link LogCapture}, the SLF4J provider of common's tests.
 */
class DecodedBroadcastCacheLoggingTest extends CacheTestBase {

  private LogCapture cacheLog;
  private LogCapture ipcLog;

  @BeforeEach
  void capture() {
    cacheLog = LogCapture.of(DecodedBroadcastCache.class);
    ipcLog = LogCapture.of(ArrowIpc.class);
  }

  @AfterEach
  void stopCapturing() {
    cacheLog.close();
    ipcLog.close();
  }

  /** A cache with Quiver's own decoder. */
  private DecodedBroadcastCache arrowIpcCache() {
    return caches.with(BroadcastDecoder.arrowIpc(), Long.MAX_VALUE);
  }

  private TestBroadcast broadcast(long id) throws Exception {
    return encode(id, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {300}, new int[] {200});
  }

  @Test
  void aSharedDecodeIsOneInfoLineWithTheBroadcastItsStreamsBytesAndTime() throws Exception {
    TestBroadcast broadcast = broadcast(41);
    long decodedBytes = bytesOfOneDecode(broadcast, allocator);
    long compressedBytes = broadcast.streamLength(0) + broadcast.streamLength(1);
    DecodedBroadcastCache cache = arrowIpcCache();
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();

    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, first, true), broadcast, null);
    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, second, true), broadcast, null);

    List<String> info = cacheLog.at(Level.INFO);
    assertEquals(1, info.size(), () -> "one decode, one line: " + cacheLog.events());
    assertMatches(
        "Decoded broadcast 41 in \\d+ ms for this executor's tasks to share: 2 streams, "
            + compressedBytes
            + " compressed bytes, "
            + decodedBytes
            + " decoded bytes \\(task "
            + first.attemptId()
            + "\\)",
        info.get(0));
    assertEquals(
        List.of("Task " + second.attemptId() + " reads broadcast 41, decoded by another task"),
        cacheLog.at(Level.DEBUG));
    assertTrue(cacheLog.at(Level.WARN).isEmpty());

    complete(first, second);
    assertEquals(
        "Released broadcast 41 (" + decodedBytes + " bytes): its last holder is gone",
        last(cacheLog.at(Level.DEBUG)));
  }

  @Test
  void withSharingOffEachTaskDecodeIsADebugLineOnly() throws Exception {
    TestBroadcast broadcast = broadcast(42);
    DecodedBroadcastCache cache = arrowIpcCache();
    FakeTask first = new FakeTask();
    FakeTask second = new FakeTask();

    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, first, false), broadcast, null);
    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, second, false), broadcast, null);

    assertTrue(cacheLog.at(Level.INFO).isEmpty(), () -> cacheLog.events().toString());
    List<String> debug = cacheLog.at(Level.DEBUG);
    assertEquals(2, debug.size(), debug::toString);
    for (int i = 0; i < 2; i++) {
      long task = (i == 0 ? first : second).attemptId();
      assertMatches(
          "Decoded broadcast 42 in \\d+ ms for task "
              + task
              + " alone \\(sharing is off\\): 2 streams, .*",
          debug.get(i));
    }
    complete(first, second);
  }

  @Test
  void aRefusedBroadcastIsOneWarnLineSayingWhatAndWhereWithoutAStackTrace() throws Exception {
    TestBroadcast valid = broadcast(43);
    BroadcastSource damaged = truncated(valid, 1);
    DecodedBroadcastCache cache = arrowIpcCache();
    FakeTask task = new FakeTask();

    IpcFormatException refused =
        assertThrows(IpcFormatException.class, () -> cache.open(damaged, task, true));

    LogCapture.Event warning =
        onlyWarningMatching(
            "Refused broadcast 43 for task "
                + task.attemptId()
                + " after \\d+ ms: Cannot decode Arrow IPC stream"
                + " \\(broadcast 43, stream 1\\) .*");
    assertTrue(warning.message.endsWith(refused.getMessage()));
    assertNull(warning.throwable, "the failing task carries the trace to Spark's log");
    assertTrue(cacheLog.at(Level.INFO).isEmpty());
    // Stream 0 decoded (a TRACE line); the refusal of stream 1 is the cache's line alone.
    assertTrue(
        ipcLog.events().stream().noneMatch(e -> e.message.contains("stream 1")),
        () -> "logged twice: " + ipcLog.events());
    task.complete();
  }

  @Test
  void aFailedSharedDecodeWarnsWithItsCauseAndEachWaiterDecodingForItselfIsInfo() throws Exception {
    TestBroadcast broadcast =
        encode(44, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {400}, new int[] {400});
    decoder.failCall(1);
    FakeTask failing = new FakeTask();
    HeldDecode decode = openBehindAHeldDecode(broadcast, failing);
    List<FakeTask> waiters = newTasks(2);
    List<Future<Integer>> reads = readTogether(broadcast, waiters, true, Consumer.CLOSES_EACH_VIEW);
    awaitCondition("both waiters wait", () -> cache.counters().waits() >= waiters.size());
    decode.release();

    ExecutionException failure = assertThrows(ExecutionException.class, () -> done(decode.open(0)));
    for (Future<Integer> read : reads) {
      read.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    LogCapture.Event warning =
        onlyWarningMatching(
            "Decoding broadcast 44 for task "
                + failing.attemptId()
                + " failed after \\d+ ms; 2 waiting tasks decode it for themselves");
    assertInstanceOf(ScriptedDecoder.InjectedFailure.class, failure.getCause());
    assertSame(failure.getCause(), warning.throwable, "the cause goes with the line");
    List<String> info = cacheLog.at(Level.INFO);
    assertEquals(2, info.size(), info::toString);
    for (FakeTask waiter : waiters) {
      String prefix = "Decoded broadcast 44 in ";
      String alone =
          " for task "
              + waiter.attemptId()
              + " alone (the shared decode by another task failed): 2 streams, ";
      assertTrue(
          info.stream().anyMatch(line -> line.startsWith(prefix) && line.contains(alone)),
          () -> "no fallback line for task " + waiter.attemptId() + " in " + info);
    }
    long waits =
        cacheLog.at(Level.DEBUG).stream()
            .filter(line -> line.contains("waits for broadcast 44, which another task"))
            .count();
    assertEquals(2, waits);

    failing.complete();
    waiters.forEach(FakeTask::complete);
  }

  @Test
  void anInterruptedDecodeIsAnInfoLineNotAWarning() throws Exception {
    BroadcastDecoder<DecodedBroadcast> interrupted =
        (source, into) -> {
          throw new InterruptedIOException("the task was killed");
        };
    DecodedBroadcastCache cache = caches.with(interrupted, Long.MAX_VALUE);
    FakeTask task = new FakeTask();
    assertThrows(InterruptedIOException.class, () -> cache.open(broadcast(46), task, true));
    assertTrue(warnings(cacheLog).isEmpty(), () -> cacheLog.events().toString());
    List<String> info = cacheLog.at(Level.INFO);
    assertEquals(1, info.size(), info::toString);
    assertMatches(
        "Stopped decoding broadcast 46 for task "
            + task.attemptId()
            + " after \\d+ ms: interrupted",
        info.get(0));
    task.complete();
  }

  @Test
  void nothingIsRecordedOnceTheCaptureIsClosed() throws Exception {
    TestBroadcast broadcast = broadcast(45);
    DecodedBroadcastCache cache = arrowIpcCache();
    cacheLog.close();
    FakeTask task = new FakeTask();
    Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, task, true), broadcast, null);
    task.complete();
    assertTrue(cacheLog.events().isEmpty());
  }

  /** The cache's one warning (or error), checked to match {@code regex}. */
  private LogCapture.Event onlyWarningMatching(String regex) {
    List<LogCapture.Event> warnings = warnings(cacheLog);
    assertEquals(1, warnings.size(), () -> cacheLog.events().toString());
    assertMatches(regex, warnings.get(0).message);
    return warnings.get(0);
  }

  private static List<LogCapture.Event> warnings(LogCapture capture) {
    List<LogCapture.Event> found = new ArrayList<>();
    for (LogCapture.Event e : capture.events()) {
      if (e.level == Level.WARN || e.level == Level.ERROR) {
        found.add(e);
      }
    }
    return found;
  }

  private static void assertMatches(String regex, String line) {
    assertTrue(Pattern.compile(regex).matcher(line).matches(), () -> "«" + line + "» !~ " + regex);
  }

  private static String last(List<String> lines) {
    return lines.get(lines.size() - 1);
  }

  /** {@code valid} with its stream {@code cut} ending half way: bytes Quiver refuses. */
  private static BroadcastSource truncated(TestBroadcast valid, int cut) {
    List<byte[]> streams = new ArrayList<>();
    for (int i = 0; i < valid.streamCount(); i++) {
      byte[] all = valid.streamBytes(i);
      streams.add(i == cut ? Arrays.copyOf(all, all.length / 2) : all);
    }
    return new InMemoryBroadcast(valid.broadcastId(), valid.codec(), streams, true);
  }
}
