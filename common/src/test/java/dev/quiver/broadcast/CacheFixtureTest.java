package dev.quiver.broadcast;

import static dev.quiver.testing.JUnitRuns.failureOf;
import static dev.quiver.testing.JUnitRuns.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.StreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;

/**
 * The cache fixture as JUnit runs it: the fixture classes below (nested, so that Surefire does not
 * pick them up, and some failing on purpose) run through JUnit's launcher, and their results are
 * checked here.
 */
class CacheFixtureTest {

  @Test
  void aTestThatEndsWithNothingHeldPassesAndItsFieldsAndParametersAreTheSameParts() {
    Map<String, TestExecutionResult> results = run(Clean.class);
    TestExecutionResult result =
        results.get(
            "readsAndCompletes(BufferAllocator, ScriptedDecoder, DecodedBroadcastCache,"
                + " ExecutorService)");
    assertEquals(
        TestExecutionResult.Status.SUCCESSFUL, result.getStatus(), () -> results.toString());
    assertTrue(Clean.threads.isTerminated(), "the test's threads were not stopped");
  }

  @Test
  void aLeakedBufferFailsTheTestNamingTheAllocatorAndItsBytes() {
    Throwable failure = failureOf(run(LeakingABuffer.class), "leaksABuffer(BufferAllocator)");
    assertInstanceOf(AssertionError.class, failure);
    assertTrue(
        failure
            .getMessage()
            .contains(
                "allocator 'LeakingABuffer.leaksABuffer' still holds 1024 bytes after the test"),
        failure.getMessage());
  }

  @Test
  void aTaskThatNeverCompletesFailsTheTestForTheCacheAndForTheAllocator() {
    Throwable failure =
        failureOf(run(Leaking.class), "leavesAHold(BufferAllocator, DecodedBroadcastCache)");
    assertTrue(failure.getMessage().startsWith("the cache still holds"), failure.getMessage());
    List<String> attached = attached(failure);
    assertTrue(
        attached.stream().anyMatch(m -> m.contains("'Leaking.leavesAHold' still holds")),
        attached::toString);
  }

  @Test
  void everyCacheMadeForTheTestIsCheckedAndTheTestsOwnFailureComesFirst() {
    Throwable failure =
        failureOf(
            run(Leaking.class),
            "failsWithAHoldOnAnotherCache(BufferAllocator, DecodedBroadcastCache, Caches)");
    assertEquals("the test's own failure", failure.getMessage());
    List<String> attached = attached(failure);
    assertTrue(
        attached.stream().anyMatch(m -> m.startsWith("the cache still holds")), attached::toString);
    assertTrue(
        attached.stream()
            .anyMatch(m -> m.contains("'Leaking.failsWithAHoldOnAnotherCache' still holds")),
        attached::toString);
  }

  @Test
  void partsOutsideATestAreRefused() {
    Throwable failure = failureOf(run(OutsideATest.class), "CacheFixtureTest$OutsideATest");
    assertTrue(failure.getMessage().contains("gives its parts per test"), failure.getMessage());
  }

  /** The messages of what is attached to {@code failure}, and attached to those, and so on. */
  private static List<String> attached(Throwable failure) {
    List<String> messages = new ArrayList<>();
    for (Throwable t : failure.getSuppressed()) {
      messages.add(t.getMessage());
      messages.addAll(attached(t));
    }
    return messages;
  }

  private static TestBroadcast broadcast(BufferAllocator allocator) throws Exception {
    return TestBroadcast.encode(1, Shape.BUILD_SIDE, StreamCodec.NONE, allocator, new int[] {10});
  }

  @ExtendWith(CacheFixture.class)
  static class Clean {
    static ExecutorService threads;

    private BufferAllocator allocator;
    private ScriptedDecoder decoder;
    private DecodedBroadcastCache cache;

    @BeforeEach
    void keep(BufferAllocator allocator, ScriptedDecoder decoder, DecodedBroadcastCache cache) {
      this.allocator = allocator;
      this.decoder = decoder;
      this.cache = cache;
    }

    @Test
    void readsAndCompletes(
        BufferAllocator allocator,
        ScriptedDecoder decoder,
        DecodedBroadcastCache cache,
        ExecutorService executor)
        throws Exception {
      assertSame(this.allocator, allocator);
      assertSame(this.decoder, decoder);
      assertSame(this.cache, cache);
      TestBroadcast broadcast = broadcast(allocator);
      FakeTask task = new FakeTask();
      assertEquals(
          1, Consumer.CLOSES_EACH_VIEW.consume(cache.open(broadcast, task, true), broadcast, null));
      assertEquals(1, decoder.calls());
      task.complete();
      threads = executor;
      // A thread still sleeping when the test ends: the fixture must stop it.
      assertNotNull(
          executor.submit(
              () -> {
                Thread.sleep(60_000);
                return null;
              }));
    }
  }

  /** No cache: the allocator's check is the failure (a cache's would come first). */
  @ExtendWith(CacheFixture.class)
  static class LeakingABuffer {
    @Test
    void leaksABuffer(BufferAllocator allocator) {
      allocator.buffer(1024);
    }
  }

  @ExtendWith(CacheFixture.class)
  static class Leaking {
    @Test
    void leavesAHold(BufferAllocator allocator, DecodedBroadcastCache cache) throws Exception {
      cache.open(broadcast(allocator), new FakeTask(), true);
    }

    @Test
    void failsWithAHoldOnAnotherCache(
        BufferAllocator allocator, DecodedBroadcastCache cache, CacheFixture.Caches caches)
        throws Exception {
      caches
          .with(BroadcastDecoder.arrowIpc(), Long.MAX_VALUE)
          .open(broadcast(allocator), new FakeTask(), true);
      throw new AssertionError("the test's own failure");
    }
  }

  @ExtendWith(CacheFixture.class)
  static class OutsideATest {
    @BeforeAll
    static void tooEarly(DecodedBroadcastCache cache) {}

    @Test
    void neverRuns() {}
  }
}
