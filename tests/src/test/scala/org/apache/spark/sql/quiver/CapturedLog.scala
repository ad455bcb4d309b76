package org.apache.spark.sql.quiver

import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{LoggerConfig, Property}

/** One line that Spark's log4j2 received. */
final case class LoggedLine(level: Level, logger: String, message: String, thrown: Throwable)

/**
 * What a logger (and those under its name) says while a test runs, recorded through the log4j2
 * that Spark brings: the binding Quiver's SLF4J calls reach in a Spark application.
 */
object CapturedLog {

  /** The lines of `loggerName` at `level` or above while `body` runs, in order. */
  def during(loggerName: String, level: Level)(body: => Unit): Seq[LoggedLine] = {
    val lines = new ConcurrentLinkedQueue[LoggedLine]()
    val appender =
      new AbstractAppender(s"capture-$loggerName", null, null, true, Property.EMPTY_ARRAY) {
        override def append(event: LogEvent): Unit =
          lines.add(
            LoggedLine(
              event.getLevel,
              event.getLoggerName,
              event.getMessage.getFormattedMessage,
              event.getThrown
            )
          )
      }
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val config = context.getConfiguration
    // Not additive: the captured lines stay off the console, whatever their level.
    val logger = new LoggerConfig(loggerName, level, false)
    logger.addAppender(appender, level, null)
    appender.start()
    config.addLogger(loggerName, logger)
    context.updateLoggers()
    try body
    finally {
      config.removeLogger(loggerName)
      context.updateLoggers()
      appender.stop()
    }
    lines.toArray(new Array[LoggedLine](0)).toSeq
  }
}
