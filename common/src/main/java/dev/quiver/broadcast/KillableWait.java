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
 * How a task waits for another task's work on an entry (its decode, or one of its derived values),
 * so that a killed waiter stops with its engine's task-killed exception however long the work
 * takes. Where the engine tells of kills ({@link TaskScope#onKill(Runnable)}), the kill wakes the
 * waiter at once and it makes no periodic checks; otherwise it checks every {@link
 * DecodedBroadcastCache#KILL_CHECK_MILLIS} ms.
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
    CompletableFuture<Void> killed = new CompletableFuture<>();
    boolean toldOfKills = task.onKill(() -> killed.complete(null));
    try {
      if (toldOfKills) {
        CompletableFuture.anyOf(outcome, killed).get();
        if (outcome.isDone()) {
          return outcome.getNow(false);
        }
        task.throwIfKilled();
        // Woken by a kill the task does not report yet: fall back to checking.
      }
      return poll(outcome, task);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      task.throwIfKilled();
      InterruptedIOException interrupted =
          new InterruptedIOException("interrupted waiting for " + what.get());
      interrupted.initCause(e);
      throw interrupted;
    } catch (ExecutionException e) {
      // Neither future completes exceptionally; kept for the compiler.
      return false;
    }
  }

  /** Waits for {@code outcome}, checking every {@code KILL_CHECK_MILLIS} ms for a kill. */
  private static boolean poll(CompletableFuture<Boolean> outcome, TaskScope task)
      throws InterruptedException, ExecutionException {
    while (true) {
      try {
        return outcome.get(DecodedBroadcastCache.KILL_CHECK_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        task.throwIfKilled();
      }
    }
  }
}
