package org.apache.spark.sql.quiver.join

import java.util.concurrent.atomic.AtomicLong

import dev.quiver.task.TaskScope

/**
 * A read of a broadcast on the driver, outside any task: it is never killed, and its hold on the
 * cache entry ends when [[complete]] is called.
 */
final private[quiver] class DriverReadScope extends TaskScope {

  // Negative, so that it is no Spark task attempt id.
  private val id = DriverReadScope.ids.decrementAndGet()
  private var listeners = List.empty[Runnable]

  override def attemptId(): Long = id

  override def onCompletion(listener: Runnable): Unit = synchronized {
    listeners = listener :: listeners
  }

  override def isInterrupted(): Boolean = false

  override def throwIfKilled(): Unit = ()

  /** Ends the read: runs every completion listener, last registered first. */
  def complete(): Unit = {
    val toRun = synchronized {
      val all = listeners
      listeners = Nil
      all
    }
    toRun.foreach(_.run())
  }
}

private object DriverReadScope {
  private val ids = new AtomicLong()
}
