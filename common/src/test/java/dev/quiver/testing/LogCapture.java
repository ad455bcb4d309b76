package dev.quiver.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * What Quiver logs during part of a test. common has no logging backend (Spark brings one at run
 * time), so its tests have this one: an SLF4J provider ({@link Provider}, registered for common's
 * surefire runs only, by {@code src/test/slf4j-provider}) whose loggers record while a capture of
 * their name is open, at every level, and drop everything otherwise (the fuzz suites' thousands of
 * refusals included).
 *
 * <pre>{@code
 * try (LogCapture logs = LogCapture.of(DecodedBroadcastCache.class)) {
 *   ...
 *   assertEquals(1, logs.at(Level.INFO).size());
 * }
 * }</pre>
 */
public final class LogCapture implements AutoCloseable {

  /** One logged line, its arguments substituted. */
  public static final class Event {
    public final Level level;
    public final String logger;
    public final String message;
    public final Throwable throwable;

    Event(Level level, String logger, String message, Throwable throwable) {
      this.level = level;
      this.logger = logger;
      this.message = message;
      this.throwable = throwable;
    }

    @Override
    public String toString() {
      return level
          + " "
          + logger
          + ": "
          + message
          + (throwable == null ? "" : " (" + throwable + ")");
    }
  }

  private static final List<LogCapture> OPEN = new CopyOnWriteArrayList<>();

  private final String loggerName;
  private final List<Event> events = new CopyOnWriteArrayList<>();

  private LogCapture(String loggerName) {
    this.loggerName = loggerName;
  }

  /** Starts recording what the logger of {@code type} (SLF4J's name for it) says. */
  public static LogCapture of(Class<?> type) {
    LogCapture capture = new LogCapture(type.getName());
    OPEN.add(capture);
    return capture;
  }

  /** Everything recorded so far, in order. */
  public List<Event> events() {
    return new ArrayList<>(events);
  }

  /** The messages recorded at {@code level}, in order. */
  public List<String> at(Level level) {
    return events.stream()
        .filter(e -> e.level == level)
        .map(e -> e.message)
        .collect(Collectors.toList());
  }

  @Override
  public void close() {
    OPEN.remove(this);
  }

  private static boolean capturing(String name) {
    for (LogCapture capture : OPEN) {
      if (capture.loggerName.equals(name)) {
        return true;
      }
    }
    return false;
  }

  private static void record(Event event) {
    for (LogCapture capture : OPEN) {
      if (capture.loggerName.equals(event.logger)) {
        capture.events.add(event);
      }
    }
  }

  /** The SLF4J provider of common's tests (found by SLF4J through META-INF/services). */
  public static final class Provider implements SLF4JServiceProvider {
    private final ILoggerFactory loggers = CapturingLogger::new;
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
      return loggers;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
      return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
      return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
      return "2.0.6";
    }

    @Override
    public void initialize() {}
  }

  /** A logger that is enabled, at every level, only while its name is captured. */
  private static final class CapturingLogger extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;

    CapturingLogger(String name) {
      this.name = name;
    }

    private boolean enabled() {
      return capturing(name);
    }

    @Override
    public boolean isTraceEnabled() {
      return enabled();
    }

    @Override
    public boolean isDebugEnabled() {
      return enabled();
    }

    @Override
    public boolean isInfoEnabled() {
      return enabled();
    }

    @Override
    public boolean isWarnEnabled() {
      return enabled();
    }

    @Override
    public boolean isErrorEnabled() {
      return enabled();
    }

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(
        Level level, Marker marker, String pattern, Object[] arguments, Throwable throwable) {
      if (enabled()) {
        record(
            new Event(
                level, name, MessageFormatter.basicArrayFormat(pattern, arguments), throwable));
      }
    }
  }
}
