package dev.quiver.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * CPU time of the benchmark thread per invocation ({@code cpuMs}), as a JMH auxiliary counter. On a
 * shared, loaded machine the wall-clock score includes time the thread spent descheduled; this
 * figure does not.
 *
 * <p>JMH sums {@code EVENTS} counters over the measurement iterations, so the per-iteration mean is
 * stored divided by their count: the reported sum is the mean over iterations.
 */
@AuxCounters(AuxCounters.Type.EVENTS)
@State(Scope.Thread)
public class InvocationCpu {

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** Mean CPU time of one invocation in this iteration, in ms (scaled as above). */
  public double cpuMs;

  private double scale;
  private long invocations;
  private long nanos;
  private long start;

  @Setup(Level.Trial)
  public void scale(BenchmarkParams params) {
    scale = 1.0 / params.getMeasurement().getCount();
  }

  @Setup(Level.Iteration)
  public void reset() {
    invocations = 0;
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
    invocations++;
    cpuMs = nanos / 1e6 / invocations * scale;
  }
}
