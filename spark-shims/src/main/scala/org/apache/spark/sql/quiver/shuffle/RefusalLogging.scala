package org.apache.spark.sql.quiver.shuffle

import java.io.EOFException

import dev.quiver.io.CorruptInputException
import org.slf4j.{Logger, LoggerFactory}

/**
 * A reduce task's read as Spark gets it, saying at WARN, once, which bad bytes ended it: this is
 * where a refusal leaves Quiver's shuffle readers (the readers below only throw). No stack trace:
 * the task fails with the exception and Spark logs it whole.
 */
final private[shuffle] class RefusalLogging[T](task: ReduceTask, read: Iterator[T])
    extends Iterator[T] {

  override def hasNext: Boolean = saying(read.hasNext)

  override def next(): T = saying(read.next())

  private def saying[R](step: => R): R =
    try step
    catch {
      case e @ (_: CorruptInputException | _: EOFException) =>
        RefusalLogging.log.warn("Refused shuffle input: {}", RefusalLogging.whatAndWhere(task, e))
        throw e
    }
}

private[shuffle] object RefusalLogging {

  /** Under `dev.quiver`, with the rest of Quiver's loggers, though the class lives in Spark's. */
  val log: Logger = LoggerFactory.getLogger("dev.quiver.spark.shuffle")

  /** The exception's message, with the map output it came from unless it names it already. */
  def whatAndWhere(task: ReduceTask, e: Throwable): String = {
    val where = task.describeStream
    val what = String.valueOf(e.getMessage)
    if (what.contains(where)) what else s"$where: $what"
  }
}
