package dev.quiver.broadcast;

import dev.quiver.io.CorruptInputException;
import dev.quiver.task.TaskScope;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@link DecodedBroadcastCache} says about its decodes, under its logger name. Levels as
 * Spark's own broadcast reads: INFO for what happens once per broadcast and executor (a decode the
 * executor's tasks share), DEBUG for what happens once per task; WARN for a failed decode. A
 * refusal of bad bytes is logged here, once, and not where the IPC decode threw it: only the cache
 * knows which broadcast and task it was, and whether other tasks were waiting for it.
 */
final class DecodeLog {

  static final Logger LOG = LoggerFactory.getLogger(DecodedBroadcastCache.class);

  /** Why a task decodes a broadcast for itself alone, and how loudly that is said. */
  enum PrivateReason {
    SHARING_OFF("sharing is off", false),
    /**
     * Found by the decode meant for sharing: said once for the tasks that overlap it, with the
     * form's reason.
     */
    NOT_SHAREABLE_FOUND("%s, so it is not shared: each task decodes it", true),
    /** A task that waited for that decode, and now decodes for itself. */
    NOT_SHAREABLE("%s", false),
    SHARED_DECODE_FAILED("the shared decode by another task failed", true);

    final String why;

    /** INFO if true (rare, and worth seeing), else DEBUG (a line per task, by design). */
    final boolean info;

    PrivateReason(String why, boolean info) {
      this.why = why;
      this.info = info;
    }
  }

  private DecodeLog() {}

  /** A decode the executor's tasks share: once per broadcast and executor while tasks overlap. */
  static void sharedDecode(BroadcastSource source, TaskScope task, long startNanos, long bytes) {
    if (LOG.isInfoEnabled()) {
      LOG.info(
          "Decoded broadcast {} in {} ms for this executor's tasks to share: {} (task {})",
          source.broadcastId(),
          millisSince(startNanos),
          sizes(source, bytes),
          task.attemptId());
    }
  }

  /** A decode one task keeps for itself. */
  static void privateDecode(
      BroadcastSource source,
      TaskScope task,
      PrivateReason reason,
      String detail,
      long startNanos,
      long bytes) {
    if (reason.info ? LOG.isInfoEnabled() : LOG.isDebugEnabled()) {
      String format = "Decoded broadcast {} in {} ms for task {} alone ({}): {}";
      Object[] args = {
        source.broadcastId(),
        millisSince(startNanos),
        task.attemptId(),
        String.format(reason.why, detail),
        sizes(source, bytes)
      };
      if (reason.info) {
        LOG.info(format, args);
      } else {
        LOG.debug(format, args);
      }
    }
  }

  /**
   * A decode that threw. Bad bytes are said at WARN without a stack trace: the message names the
   * broadcast, stream, message and batch, and the task fails with the exception, which Spark logs
   * whole. An interrupt (a killed task) is not a failure of the broadcast: INFO. Anything else is
   * unexpected: WARN with the stack trace.
   *
   * @param waiting tasks that were waiting for this (shared) decode and now decode for themselves
   */
  static void failedDecode(
      BroadcastSource source, TaskScope task, long startNanos, int waiting, Throwable failure) {
    long id = source.broadcastId();
    long millis = millisSince(startNanos);
    String others = waiting > 0 ? "; " + waiting + " waiting tasks decode it for themselves" : "";
    if (failure instanceof ClosedByInterruptException
        || failure instanceof InterruptedIOException) {
      LOG.info(
          "Stopped decoding broadcast {} for task {} after {} ms: interrupted{}",
          id,
          task.attemptId(),
          millis,
          others);
    } else if (failure instanceof CorruptInputException) {
      LOG.warn(
          "Refused broadcast {} for task {} after {} ms{}: {}",
          id,
          task.attemptId(),
          millis,
          others,
          failure.getMessage());
    } else {
      LOG.warn(
          "Decoding broadcast {} for task {} failed after {} ms{}",
          id,
          task.attemptId(),
          millis,
          others,
          failure);
    }
  }

  /** A task that found another task decoding the broadcast and waits for it. */
  static void waiting(long broadcastId, TaskScope task) {
    LOG.debug(
        "Task {} waits for broadcast {}, which another task is decoding",
        task.attemptId(),
        broadcastId);
  }

  /** A task that reads a decode another task made. */
  static void sharedRead(long broadcastId, TaskScope task) {
    LOG.debug("Task {} reads broadcast {}, decoded by another task", task.attemptId(), broadcastId);
  }

  /** A task that reads an idle retained entry: no decode. */
  static void retainedRead(long broadcastId, TaskScope task) {
    LOG.debug(
        "Task {} reads broadcast {}, retained from earlier tasks", task.attemptId(), broadcastId);
  }

  /** A shared entry kept past its last holder. */
  static void retained(long broadcastId, long bytes, long totalRetained) {
    LOG.debug(
        "Retained broadcast {} ({} bytes, {} bytes retained in all): its last holder is gone",
        broadcastId,
        bytes,
        totalRetained);
  }

  /** A shared entry that retention could not keep; it is released. */
  static void notRetained(long broadcastId, String why) {
    LOG.debug("Not retaining broadcast {}: {}", broadcastId, why);
  }

  /** An idle retained entry freed. */
  static void evicted(long broadcastId, long bytes, Eviction cause) {
    LOG.debug("Evicted retained broadcast {} ({} bytes): {}", broadcastId, bytes, cause.why());
  }

  /** A decoded broadcast freed, its last holder gone. */
  static void released(long broadcastId, long bytes) {
    LOG.debug("Released broadcast {} ({} bytes): its last holder is gone", broadcastId, bytes);
  }

  /** A {@link BroadcastHold} closed again: the consumer's bug, reported with where it happened. */
  static void doubleRelease(BroadcastHold hold) {
    LOG.warn(
        "Ignored a second release of the {}", hold, new IllegalStateException("released again"));
  }

  /** An entry its consumers alone hold, whose bytes the storage memory had no room for. */
  static void notAccounted(long broadcastId, EntryBytes bytes) {
    LOG.info(
        "Broadcast {}, held by consumers past its tasks: the storage memory has no room for its {}",
        broadcastId,
        bytes);
  }

  /** A {@link BroadcastHold} still open as the cache closes: its entry will never be freed. */
  static void leakedHold(BroadcastHold hold) {
    LOG.warn("Leaked the {}: never released, it keeps the decoded broadcast allocated", hold);
  }

  /**
   * A derived value built: INFO for a shared entry (once per broadcast, key and executor while the
   * entry lives), DEBUG for a private one (once per task).
   */
  static void derivedBuilt(
      long broadcastId,
      Object key,
      TaskScope task,
      boolean shared,
      long startNanos,
      long arrowBytes,
      DerivedValue<?> built) {
    if (shared ? LOG.isInfoEnabled() : LOG.isDebugEnabled()) {
      String format =
          "Built {} of broadcast {} in {} ms {}: {} Arrow bytes, {} heap bytes, {} native bytes"
              + " (task {})";
      Object[] args = {
        key,
        broadcastId,
        millisSince(startNanos),
        shared ? "for this executor's tasks to share" : "for this task alone",
        arrowBytes,
        built.heapBytes(),
        built.nativeBytes(),
        task.attemptId()
      };
      if (shared) {
        LOG.info(format, args);
      } else {
        LOG.debug(format, args);
      }
    }
  }

  /** A task that found another task building a derived value and waits for it. */
  static void derivedWaiting(long broadcastId, Object key, TaskScope task) {
    LOG.debug(
        "Task {} waits for {} of broadcast {}, which another task is building",
        task.attemptId(),
        key,
        broadcastId);
  }

  /** A task that reuses a derived value already built. */
  static void derivedReused(long broadcastId, Object key, TaskScope task) {
    LOG.debug("Task {} reuses {} of broadcast {}", task.attemptId(), key, broadcastId);
  }

  /**
   * A derived value's build that threw: the task fails with it, so WARN with the stack trace (it is
   * the engine's code that failed), or INFO for an interrupt (a killed task).
   */
  static void failedDerivation(
      long broadcastId, Object key, TaskScope task, long startNanos, Throwable failure) {
    long millis = millisSince(startNanos);
    if (failure instanceof ClosedByInterruptException
        || failure instanceof InterruptedIOException) {
      LOG.info(
          "Stopped building {} of broadcast {} for task {} after {} ms: interrupted",
          key,
          broadcastId,
          task.attemptId(),
          millis);
    } else {
      LOG.warn(
          "Building {} of broadcast {} for task {} failed after {} ms; the next task to ask builds"
              + " it again",
          key,
          broadcastId,
          task.attemptId(),
          millis,
          failure);
    }
  }

  /** A derived value whose release threw as its entry was freed; the rest is freed anyway. */
  static void derivedReleaseFailed(long broadcastId, Object key, Throwable failure) {
    LOG.warn("Releasing {} of broadcast {} failed", key, broadcastId, failure);
  }

  /** "2 streams, 1234 compressed bytes, 5678 decoded bytes". */
  private static String sizes(BroadcastSource source, long decodedBytes) {
    int streams = source.streamCount();
    long compressed = 0;
    for (int i = 0; i < streams && compressed >= 0; i++) {
      long length = source.streamLength(i);
      compressed = length < 0 ? -1 : compressed + length;
    }
    return streams
        + (streams == 1 ? " stream, " : " streams, ")
        + (compressed < 0 ? "unknown" : Long.toString(compressed))
        + " compressed bytes, "
        + decodedBytes
        + " decoded bytes";
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }
}
