package dev.quiver.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * CPU time of the benchmark thread per invocation ({@code cpuMs}), as a JMH auxiliary counter. On a
 * shared, loaded machine the wall-clock score includes time the thread spent descheduled; this
 * figure does not. Reported as the mean over iterations.
 */
@AuxCounters(AuxCounters.Type.EVENTS)
@State(Scope.Thread)
public class InvocationCpu extends IterationCounters {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /**
   * Mean CPU time of one invocation in this iteration, in ms (scaled as {@link IterationCounters}
   * says).
   */
  public double cpuMs;

  private long nanos;
  private long start;

  @Override
  protected void clearSums() {
    nanos = 0;
  }

  /** A benchmark's body, whose CPU time {@link #count} adds up. */
  @FunctionalInterface
  interface Body<T> {
    T run() throws IOException;
  }

  /** Runs {@code body} and counts the CPU time it took, also when it throws. */
  <T> T count(Body<T> body) throws IOException {
    start();
    try {
      return body.run();
    } finally {
      stop();
    }
  }

  void start() {
    start = THREADS.getCurrentThreadCpuTime();
  }

  void stop() {
    nanos += THREADS.getCurrentThreadCpuTime() - start;
    countEvent();
    cpuMs = perEvent(nanos / 1e6);
  }
}
