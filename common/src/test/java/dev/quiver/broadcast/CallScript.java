package dev.quiver.broadcast;

import java.io.InterruptedIOException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a scripted test double does on each of its calls, numbered from 1 in the order they start:
 * chosen calls block at a {@link Gate} until the test releases it, chosen calls fail.
 */
final class CallScript {

  private final String call;
  private final AtomicInteger calls = new AtomicInteger();
  private final Map<Integer, Gate> gates = new ConcurrentHashMap<>();
  private final Set<Integer> failing = ConcurrentHashMap.newKeySet();

  /** A script of calls named {@code call} in the gates' failures ("decode", "build"). */
  CallScript(String call) {
    this.call = call;
  }

  /** Call {@code number} blocks until the returned gate is released. */
  Gate block(int number) {
    Gate gate = new Gate(call);
    gates.put(number, gate);
    return gate;
  }

  /** Call {@code number} fails (after its gate, if any). */
  void fail(int number) {
    failing.add(number);
  }

  /** Starts a call: its number. */
  int start() {
    return calls.incrementAndGet();
  }

  /** Blocks call {@code number} at its gate, if it has one, until the test releases it. */
  void passGate(int number) throws InterruptedIOException {
    Gate gate = gates.get(number);
    if (gate != null) {
      gate.pass();
    }
  }

  /** Whether call {@code number} is scripted to fail. */
  boolean fails(int number) {
    return failing.contains(number);
  }

  /** Calls started so far. */
  int calls() {
    return calls.get();
  }

  /** Releases every gate, so that no call stays blocked after a test. */
  void releaseAll() {
    for (Gate gate : gates.values()) {
      gate.release();
    }
  }
}
