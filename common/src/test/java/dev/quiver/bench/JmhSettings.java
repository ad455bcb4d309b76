package dev.quiver.bench;

import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings Quiver's benchmarks share: one fork with a 2 GiB heap and {@code java.nio} open
 * for Arrow's memory module, two warm-up and five measured iterations of 2 s, average time. JMH's
 * annotations are inherited, so a benchmark states only what it does differently.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx2g", "--add-opens=java.base/java.nio=ALL-UNNAMED"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
public abstract class JmhSettings {}
