package dev.quiver.broadcast;

import java.io.InterruptedIOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds one scripted call (a decode, a build) until the test releases it. */
final class Gate {

  /** How long either side waits for the other before giving up (so a broken test ends). */
  private static final long TIMEOUT_SECONDS = 60;

  private final String call;
  private final CountDownLatch entered = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);

  /** A gate for {@code call}, as the failures name it ("decode", "build"). */
  Gate(String call) {
    this.call = call;
  }

  /** Waits until the call has reached the gate. */
  void awaitEntered() throws InterruptedException {
    if (!entered.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      throw new AssertionError("the " + call + " never reached its gate");
    }
  }

  void release() {
    released.countDown();
  }

  boolean isReleased() {
    return released.getCount() == 0;
  }

  /** The call's side: tells the test it is here, then waits for the release. */
  void pass() throws InterruptedIOException {
    entered.countDown();
    try {
      if (!released.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test never released the " + call);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted at the gate");
    }
  }
}
