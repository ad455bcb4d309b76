package dev.quiver.bench;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * What the benchmarks' JMH auxiliary counters share. JMH sums {@code EVENTS} counters over the
 * measurement iterations, so each figure is stored divided by their count: the reported sum is the
 * figure of one iteration (a mean, where the iterations' figures differ). A figure that is a mean
 * over the events of an iteration (invocations, rounds) is kept as a sum that starts again with
 * each iteration.
 */
public abstract class IterationCounters {

  private double scale;
  private long events;

  @Setup(Level.Trial)
  public void scale(BenchmarkParams params) {
    scale = 1.0 / params.getMeasurement().getCount();
  }

  @Setup(Level.Iteration)
  public void newIteration() {
    events = 0;
    clearSums();
  }

  /** Sets the sums of the iteration's events to zero; nothing for counters that keep none. */
  protected void clearSums() {}

  /** One more event in this iteration. */
  final void countEvent() {
    events++;
  }

  /** {@code figure}, stored so that JMH's sum over the iterations reports it. */
  final double perIteration(double figure) {
    return figure * scale;
  }

  /** The mean per event of this iteration's {@code sum}, stored as {@link #perIteration}. */
  final double perEvent(double sum) {
    return perIteration(sum / events);
  }
}
