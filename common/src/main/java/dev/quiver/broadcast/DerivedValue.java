package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.util.Preconditions;

/**
 * A value derived from a decoded broadcast (see {@link Derivation}), with what it costs beyond its
 * allocator and how to free it.
 */
@Public
public final class DerivedValue<T> implements AutoCloseable {

  private final T value;
  private final long heapBytes;
  private final long nativeBytes;
  private final AutoCloseable release;
  private final AtomicBoolean closed = new AtomicBoolean();

  private DerivedValue(T value, long heapBytes, long nativeBytes, AutoCloseable release) {
    this.value = value;
    this.heapBytes = heapBytes;
    this.nativeBytes = nativeBytes;
    this.release = release;
  }

  /**
   * A value and what it costs.
   *
   * @param value what tasks get; not null
   * @param heapBytes bytes the value holds outside its Arrow allocator (e.g. JVM heap), counted
   *     like the entry's own bytes: in the cache's gauges, the retention budget and the storage
   *     memory. An estimate is fine; it must not be negative
   * @param release frees the value (may be a no-op); called once, when the entry goes
   */
  public static <T> DerivedValue<T> of(T value, long heapBytes, AutoCloseable release) {
    Preconditions.checkArgument(heapBytes >= 0, "heapBytes must not be negative: %s", heapBytes);
    return checked(value, heapBytes, 0, release);
  }

  /**
   * A value that keeps memory outside the JVM's allocators, such as an engine's native hash table.
   *
   * @param value what tasks get (say, a handle to the native structure); not null
   * @param nativeBytes the native bytes the value keeps, counted like the entry's own bytes and
   *     accounted in the storage memory as {@link MemoryLocation#NATIVE}; must not be negative
   * @param release frees the native memory; called exactly once, when the entry goes (never while a
   *     task or a hold holds the entry)
   */
  public static <T> DerivedValue<T> ofNative(T value, long nativeBytes, AutoCloseable release) {
    Preconditions.checkArgument(
        nativeBytes >= 0, "nativeBytes must not be negative: %s", nativeBytes);
    return checked(value, 0, nativeBytes, release);
  }

  private static <T> DerivedValue<T> checked(
      T value, long heapBytes, long nativeBytes, AutoCloseable release) {
    Preconditions.checkNotNull(value, "value");
    Preconditions.checkNotNull(release, "release");
    return new DerivedValue<>(value, heapBytes, nativeBytes, release);
  }

  public T value() {
    return value;
  }

  /** Bytes the value keeps on the JVM's heap, beyond its allocator. */
  public long heapBytes() {
    return heapBytes;
  }

  /** Bytes the value keeps outside the JVM's allocators. */
  public long nativeBytes() {
    return nativeBytes;
  }

  /**
   * Runs the release, once; later calls do nothing. A checked exception from the release is thrown
   * as an {@link IllegalStateException}.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      release.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("releasing a derived value failed", e);
    }
  }
}
