package dev.quiver.testing;

import static dev.quiver.testing.JUnitRuns.failureOf;
import static dev.quiver.testing.JUnitRuns.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.engine.TestExecutionResult;

/**
 * The extension as JUnit runs it: the fixture classes below (nested, so that Surefire does not pick
 * them up, and some failing on purpose) run through JUnit's launcher, and their results are checked
 * here.
 */
class AllocatorExtensionTest {

  @Test
  void aTestThatReleasesEverythingPasses() {
    Map<String, TestExecutionResult> results = run(Releasing.class);
    assertEquals(
        TestExecutionResult.Status.SUCCESSFUL,
        results.get("allocatesAndReleases(BufferAllocator)").getStatus());
  }

  @Test
  void aLeakFailsTheTestNamingTheAllocatorAndItsBytes() {
    Throwable failure = failureOf(run(Leaking.class), "leaksABuffer(BufferAllocator)");
    assertInstanceOf(AssertionError.class, failure);
    String message = failure.getMessage();
    assertTrue(
        message.contains("allocator 'Leaking.leaksABuffer' still holds 1024 bytes after the test"),
        message);
    // Closing was tried all the same: Arrow's own refusals to close are attached.
    assertTrue(failure.getSuppressed().length > 0, "nothing attached");
    for (Throwable arrow : failure.getSuppressed()) {
      assertInstanceOf(IllegalStateException.class, arrow);
    }
  }

  @Test
  void aTestsOwnFailureComesFirstWithTheLeakAttached() {
    Throwable failure = failureOf(run(Leaking.class), "failsAndLeaks(BufferAllocator)");
    assertEquals("the test's own failure", failure.getMessage());
    List<String> suppressed = new ArrayList<>();
    for (Throwable t : failure.getSuppressed()) {
      suppressed.add(t.getMessage());
    }
    assertTrue(
        suppressed.stream().anyMatch(m -> m.contains("'Leaking.failsAndLeaks' still holds 64")),
        suppressed.toString());
  }

  @Test
  void aChildAllocatorLeftOpenFailsTheTest() {
    Throwable failure = failureOf(run(Leaking.class), "leavesAChildOpen(BufferAllocator)");
    assertTrue(
        failure
            .getMessage()
            .contains(
                "allocator 'Leaking.leavesAChildOpen' still has child allocators [forgotten]"),
        failure.getMessage());
  }

  @Test
  void theBeforeEachMethodAndTheTestShareOneAllocatorOfTheClassLimit() {
    Map<String, TestExecutionResult> results = run(Limited.class);
    for (Map.Entry<String, TestExecutionResult> result : results.entrySet()) {
      assertEquals(
          TestExecutionResult.Status.SUCCESSFUL,
          result.getValue().getStatus(),
          () -> result.getKey() + ": " + result.getValue().getThrowable());
    }
    assertEquals(4, results.size(), results::toString);
    List<String> names = new ArrayList<>(Limited.names);
    names.sort(null);
    assertEquals(4, names.size(), names::toString);
    assertEquals("Limited.allocationsOverTheLimitFail", names.get(0));
    assertEquals("Limited.beforeEachSeesTheTestsAllocator", names.get(1));
    // A parameterized test's allocators carry the invocation's display name.
    assertTrue(names.get(2).startsWith("Limited.eachInvocationHasItsOwn [1] "), names::toString);
    assertTrue(names.get(3).startsWith("Limited.eachInvocationHasItsOwn [2] "), names::toString);
  }

  @Test
  void anAllocatorOutsideATestIsRefused() {
    Throwable failure = failureOf(run(OutsideATest.class), "AllocatorExtensionTest$OutsideATest");
    assertTrue(failure.getMessage().contains("gives an allocator per test"), failure.getMessage());
  }

  @Test
  void aLimitMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> AllocatorExtension.withLimit(0));
  }

  @ExtendWith(AllocatorExtension.class)
  static class Releasing {
    @Test
    void allocatesAndReleases(BufferAllocator allocator) {
      try (ArrowBuf buffer = allocator.buffer(1024)) {
        buffer.setByte(0, 1);
      }
    }
  }

  @ExtendWith(AllocatorExtension.class)
  static class Leaking {
    @Test
    void leaksABuffer(BufferAllocator allocator) {
      allocator.buffer(1024);
    }

    @Test
    void failsAndLeaks(BufferAllocator allocator) {
      allocator.buffer(64);
      throw new AssertionError("the test's own failure");
    }

    @Test
    void leavesAChildOpen(BufferAllocator allocator) {
      allocator.newChildAllocator("forgotten", 0, 1024);
    }
  }

  static class Limited {
    static final long LIMIT = 1 << 20;
    static final List<String> names = new ArrayList<>();

    @RegisterExtension
    static final AllocatorExtension ALLOCATOR = AllocatorExtension.withLimit(LIMIT);

    private BufferAllocator fromBeforeEach;

    @BeforeEach
    void keep(BufferAllocator allocator) {
      fromBeforeEach = allocator;
    }

    @Test
    void beforeEachSeesTheTestsAllocator(BufferAllocator allocator) {
      assertSame(fromBeforeEach, allocator);
      names.add(allocator.getName());
    }

    @Test
    void allocationsOverTheLimitFail(BufferAllocator allocator) {
      names.add(allocator.getName());
      assertEquals(LIMIT, allocator.getLimit());
      assertThrows(OutOfMemoryException.class, () -> allocator.buffer(2 * LIMIT));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void eachInvocationHasItsOwn(int n, BufferAllocator allocator) {
      names.add(allocator.getName());
      assertSame(fromBeforeEach, allocator);
      allocator.buffer(n).close();
    }
  }

  @ExtendWith(AllocatorExtension.class)
  static class OutsideATest {
    @org.junit.jupiter.api.BeforeAll
    static void tooEarly(BufferAllocator allocator) {
      allocator.buffer(1).close();
    }

    @Test
    void neverRuns() {}
  }
}
