package dev.quiver.io;

import dev.quiver.annotation.Internal;

/** Closing several resources so that one failure neither hides another nor leaks the rest. */
@Internal
public final class Closeables {

  private Closeables() {}

  /**
   * Closes every resource, in order. Failures are collected: the first is thrown (unchecked), the
   * others are suppressed into it.
   */
  public static void closeAll(Iterable<? extends AutoCloseable> resources) {
    RuntimeException failure = null;
    for (AutoCloseable resource : resources) {
      try {
        if (resource != null) {
          resource.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure =
              e instanceof RuntimeException
                  ? (RuntimeException) e
                  : new IllegalStateException("failed to close " + resource, e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Closes every resource while {@code primary} is being thrown: close failures are suppressed into
   * it rather than replacing it.
   */
  public static void closeAll(Iterable<? extends AutoCloseable> resources, Throwable primary) {
    try {
      closeAll(resources);
    } catch (RuntimeException e) {
      primary.addSuppressed(e);
    }
  }
}
