package org.apache.spark.sql.comet.quiver

import java.util.concurrent.atomic.AtomicLong

/**
 * The buffers of Quiver's decoded broadcast that one task lends Comet, and what keeps them valid
 * until the later of the task's end and Comet's release of the last one. While the task runs, the
 * task's own hold on the decoded entry does. Comet's native plan may keep buffers (through its own
 * C Data export of them) until it is closed, which may be after the task's JVM side has finished:
 * if any buffer is still out when the task ends, a hold is taken then (`holdPastTask`), before the
 * task's own hold goes, and the last buffer given back ends it. Most tasks have every buffer back
 * by then and take no hold of their own: a hold is a round through the cache's monitor each way,
 * per task.
 *
 * [[taskEnded]] must run while the task's own hold stands: the task's completion listener that
 * calls it is registered after the cache's (which ends the task's hold), and Spark runs a task's
 * completion listeners in the reverse order of their registration.
 *
 * Thread-safe: Comet gives buffers back on whatever thread closes them.
 */
final private[quiver] class LentBuffers(holdPastTask: () => AutoCloseable) {

  /** Buffers out, plus one for the task until it ends. */
  private val outstanding = new AtomicLong(1)

  /** The hold taken at the task's end for the buffers still out then, if any were. */
  @volatile private var hold: AutoCloseable = _

  /** Counts one buffer lent; the task is running, so the count is above zero. */
  def lend(): Unit = {
    val before = outstanding.getAndIncrement()
    require(before > 0, "buffers lent after the task ended and Comet gave back the last one")
  }

  /** One lent buffer given back; the last one out ends the hold, if the task took one. */
  def giveBack(): Unit = if (outstanding.decrementAndGet() == 0) {
    val taken = hold
    if (taken != null) taken.close()
  }

  /**
   * The task is ending: if Comet still has buffers, they are held past it; then the task's own
   * count goes. Only the task's thread lends, so a count of one (the task's) cannot grow here.
   */
  def taskEnded(): Unit = {
    // Taken before the task's count goes, so the last giveBack, on any thread, sees it.
    if (outstanding.get() > 1) hold = holdPastTask()
    giveBack()
  }
}
