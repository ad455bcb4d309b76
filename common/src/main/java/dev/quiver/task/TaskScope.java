package dev.quiver.task;

import dev.quiver.annotation.Public;

/**
 * The task a read belongs to. Quiver's core knows tasks only through this interface: the Spark
 * shims implement it over {@code TaskContext}, tests over a controllable fake.
 */
@Public
public interface TaskScope {

  /** Unique within the executor; Spark's task attempt id. */
  long attemptId();

  /** Runs {@code listener} once when the task ends, whether it succeeded, failed or was killed. */
  void onCompletion(Runnable listener);

  /** Whether the task has been asked to stop (killed or interrupted). */
  boolean isInterrupted();

  /**
   * Throws the engine's task-killed exception (Spark's {@code TaskKilledException} with its kill
   * reason) if the task has been killed; returns normally otherwise.
   */
  void throwIfKilled();

  /**
   * Asks to have {@code listener} run as soon as the task is killed, where the engine can say so
   * (Spark 4.2's task interrupt listeners): a task waiting for another task's work then stops at
   * once instead of at its next check. The listener runs on the killing thread, so it only wakes
   * the waiter; it may run at once if the task is already killed, and at most once.
   *
   * @return whether the listener was registered; {@code false} (the default) if the engine cannot
   *     tell, in which case waiters check {@link #throwIfKilled()} every {@link
   *     dev.quiver.broadcast.DecodedBroadcastCache#KILL_CHECK_MILLIS} ms
   */
  default boolean onKill(Runnable listener) {
    return false;
  }
}
