package dev.quiver.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs a fixture class of a test extension through JUnit's launcher, for the tests of the
 * extensions: the fixtures (nested in their test, so that Surefire does not pick them up) fail on
 * purpose, and their results are what is checked.
 */
public final class JUnitRuns {

  private JUnitRuns() {}

  /** Runs {@code fixture}: each test's result by display name (and any container that failed). */
  public static Map<String, TestExecutionResult> run(Class<?> fixture) {
    Map<String, TestExecutionResult> results = new LinkedHashMap<>();
    Launcher launcher = LauncherFactory.create();
    launcher.execute(
        LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build(),
        new TestExecutionListener() {
          @Override
          public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            if (test.isTest() || result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
              results.put(test.getDisplayName(), result);
            }
          }
        });
    return results;
  }

  /** What {@code test} failed with; fails when it did not fail. */
  public static Throwable failureOf(Map<String, TestExecutionResult> results, String test) {
    TestExecutionResult result = results.get(test);
    assertEquals(TestExecutionResult.Status.FAILED, result.getStatus(), test);
    return result.getThrowable().orElseThrow();
  }
}
