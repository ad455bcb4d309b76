package org.apache.spark.sql.comet.quiver

import java.util.concurrent.atomic.AtomicLong

import dev.quiver.broadcast.BroadcastHold

/**
 * The buffers of Quiver's decoded broadcast that one task lends Comet, and the hold that keeps them
 * valid: the hold ends once the task has ended and Comet has given back the last buffer it was
 * lent, whichever comes later. Comet's native plan keeps the build side's buffers (through its own
 * C Data export of them) until it is closed, which may be after the task's JVM side has finished.
 *
 * Thread-safe: Comet gives buffers back on whatever thread closes them.
 */
final private[quiver] class LentBuffers(hold: BroadcastHold) {

  /** Buffers out, plus one for the task until it ends. */
  private val outstanding = new AtomicLong(1)

  /** Counts one buffer lent; the task is running, so the count is above zero. */
  def lend(): Unit = {
    val before = outstanding.getAndIncrement()
    require(before > 0, s"buffers lent after their hold ended ($hold)")
  }

  /** One lent buffer given back; the last one out ends the hold. */
  def giveBack(): Unit = if (outstanding.decrementAndGet() == 0) hold.close()

  /** The task has ended: its own count goes, and with the last buffer the hold. */
  def taskEnded(): Unit = giveBack()
}
