package dev.quiver.testing;

import dev.quiver.task.TaskScope;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link TaskScope} a test drives by hand: it can be killed, and {@link #complete()} runs its
 * completion listeners as Spark does at the end of a task (in registration order, each once).
 */
public final class FakeTask implements TaskScope {

  private static final AtomicLong NEXT_ID = new AtomicLong(1);

  /** Thrown by {@link #throwIfKilled()}, standing in for Spark's TaskKilledException. */
  public static final class KilledException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KilledException(String reason) {
      super(reason);
    }
  }

  private final long attemptId = NEXT_ID.getAndIncrement();
  private final boolean tellsOfKills;
  private final List<Runnable> listeners = new ArrayList<>();
  private final List<Runnable> killListeners = new ArrayList<>();
  private final AtomicLong killChecks = new AtomicLong();
  private final AtomicLong checksAfterKill = new AtomicLong();
  private volatile String killReason;
  private volatile Runnable killCheckHook;
  private boolean completed;

  /** A task whose engine does not tell of kills (Spark before 4.2): waiters check for them. */
  public FakeTask() {
    this(false);
  }

  private FakeTask(boolean tellsOfKills) {
    this.tellsOfKills = tellsOfKills;
  }

  /** A task whose engine runs kill listeners when it is killed, as Spark 4.2 does. */
  public static FakeTask tellingOfKills() {
    return new FakeTask(true);
  }

  @Override
  public long attemptId() {
    return attemptId;
  }

  @Override
  public synchronized void onCompletion(Runnable listener) {
    if (completed) {
      listener.run();
    } else {
      listeners.add(listener);
    }
  }

  @Override
  public boolean isInterrupted() {
    return killReason != null;
  }

  @Override
  public boolean onKill(Runnable listener) {
    if (!tellsOfKills) {
      return false;
    }
    synchronized (this) {
      if (killReason == null) {
        killListeners.add(listener);
        return true;
      }
    }
    listener.run();
    return true;
  }

  @Override
  public void throwIfKilled() {
    killChecks.incrementAndGet();
    Runnable hook = killCheckHook;
    if (hook != null) {
      hook.run();
    }
    String reason = killReason;
    if (reason != null) {
      checksAfterKill.incrementAndGet();
      throw new KilledException(reason);
    }
  }

  /**
   * Runs {@code hook} at each kill check, before it looks at the kill reason: a test can park the
   * task there, at a point it knows, to force an interleaving.
   */
  public void onKillCheck(Runnable hook) {
    killCheckHook = hook;
  }

  /**
   * Marks the task killed and runs its kill listeners, if it tells of kills; like Spark, does not
   * interrupt its thread unless asked separately.
   */
  public void kill(String reason) {
    List<Runnable> toRun;
    synchronized (this) {
      killReason = reason;
      toRun = new ArrayList<>(killListeners);
      killListeners.clear();
    }
    toRun.forEach(Runnable::run);
  }

  /** How many times {@link #throwIfKilled()} was called. */
  public long killChecks() {
    return killChecks.get();
  }

  /** How many of those calls came after {@link #kill(String)} (each of them threw). */
  public long checksAfterKill() {
    return checksAfterKill.get();
  }

  /** Runs the completion listeners, as at the end of the task. */
  public void complete() {
    List<Runnable> toRun;
    synchronized (this) {
      if (completed) {
        return;
      }
      completed = true;
      toRun = new ArrayList<>(listeners);
      listeners.clear();
    }
    RuntimeException failure = null;
    for (Runnable listener : toRun) {
      try {
        listener.run();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  public synchronized int pendingListeners() {
    return listeners.size();
  }
}
