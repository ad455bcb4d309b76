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
}
