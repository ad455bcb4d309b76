package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** One in-process run of the dump tool: its exit status and what it printed. */
final class DumpRun {

  final int status;
  final String out;
  final String err;

  private DumpRun(int status, String out, String err) {
    this.status = status;
    this.out = out;
    this.err = err;
  }

  /** Runs {@code QuiverDump} with {@code args} (each turned into a string). */
  static DumpRun of(Object... args) {
    String[] strings = new String[args.length];
    for (int i = 0; i < args.length; i++) {
      strings[i] = args[i].toString();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      status = QuiverDump.run(strings, o, e);
    }
    return new DumpRun(
        status,
        new String(out.toByteArray(), StandardCharsets.UTF_8),
        new String(err.toByteArray(), StandardCharsets.UTF_8));
  }

  /** A failed run: exit 1 and one line on stderr naming {@code contains}, no stack trace. */
  void assertOneLineError(String contains) {
    assertEquals(1, status, this::toString);
    assertTrue(err.startsWith("error: "), this::toString);
    assertEquals(1, err.split("\n").length, this::toString);
    assertTrue(err.contains(contains), this::toString);
  }

  @Override
  public String toString() {
    return "exit " + status + "\nstdout:\n" + head(out) + "\nstderr:\n" + head(err);
  }

  private static String head(String text) {
    return text.length() > 2000 ? text.substring(0, 2000) + "..." : text;
  }
}
