package dev.quiver.broadcast;

import dev.quiver.task.TaskScope;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * How a task waits for another task's work on an entry (its decode, or one of its derived values):
 * checking every {@link DecodedBroadcastCache#KILL_CHECK_MILLIS} ms whether it was killed, so that
 * a killed waiter stops with its engine's task-killed exception however long the work takes.
 */
final class KillableWait {

  private KillableWait() {}

  /**
   * Waits until {@code outcome} (which never completes exceptionally) completes, and returns it.
   *
   * @param what what is awaited, for the exception of an interrupted wait ("broadcast 7 to decode")
   * @throws InterruptedIOException if the thread was interrupted (its flag set again) and the task
   *     was not killed; a killed task's own exception otherwise
   */
  static boolean await(CompletableFuture<Boolean> outcome, TaskScope task, Supplier<String> what)
      throws IOException {
    while (true) {
      try {
        return outcome.get(DecodedBroadcastCache.KILL_CHECK_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        task.throwIfKilled();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        task.throwIfKilled();
        InterruptedIOException interrupted =
            new InterruptedIOException("interrupted waiting for " + what.get());
        interrupted.initCause(e);
        throw interrupted;
      } catch (ExecutionException e) {
        // Never completed exceptionally; kept for the compiler.
        return false;
      }
    }
  }
}
