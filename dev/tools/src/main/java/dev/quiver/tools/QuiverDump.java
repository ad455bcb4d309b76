package dev.quiver.tools;

import dev.quiver.codec.SparkStreamCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Dumps Comet or Quiver shuffle files and broadcast values: partitions, blocks, codec, schema, row
 * counts and, with {@code --rows}, the rows as JSON lines. Plain Java: no Spark. Run it through
 * {@code dev/dump}, which puts Arrow and the codecs on the class path.
 */
public final class QuiverDump {

  static final String USAGE =
      String.join(
          "\n",
          "Usage: dev/dump [options] FILE...",
          "",
          "Dumps Comet or Quiver shuffle files and broadcast values: partitions, blocks (offset,",
          "length, codec tag, field count), the schema and row counts per block, partition and",
          "file; optionally the rows as JSON lines.",
          "",
          "FILE is one of:",
          "  a shuffle .data file, with Spark's .index beside it (or the .index itself);",
          "  a stream of shuffle blocks without an index (read as one partition);",
          "  a broadcast value: one Arrow IPC stream compressed with a Spark codec.",
          "",
          "Options:",
          "  --codec lz4|zstd|snappy|none  a broadcast value's codec, framed as Spark's",
          "                                spark.io.compression.codec frames it (default lz4);",
          "                                shuffle blocks name their own codec",
          "  --format auto|shuffle|broadcast  what FILE is (default auto: shuffle if an index is",
          "                                beside it or it starts with a block header)",
          "  --partition N                 only reduce partition N of an indexed shuffle file",
          "  --rows                        write every row as a JSON line to stdout; the summary",
          "                                then goes to stderr",
          "  --limit N                     with --rows, at most N rows per file",
          "  --names k,b,i,...             JSON keys for the top-level columns (Comet writes",
          "                                empty names; unnamed columns are keyed _0, _1, ...)",
          "  --verbose                     print the stack trace of an error",
          "  -h, --help                    this text",
          "",
          "JSON: binary as base64, decimals as numbers, dates as yyyy-MM-dd, timestamps as",
          "ISO-8601 in UTC at the unit's precision, structs and string-keyed maps as objects,",
          "lists as arrays, nulls as null.",
          "",
          "Exit status: 0; 1 when a file cannot be read (one line on stderr that names the file",
          "position or block); 2 for a usage error.");

  private QuiverDump() {}

  public static void main(String[] args) {
    int status = run(args, System.out, System.err);
    System.out.flush();
    System.exit(status);
  }

  /** Options parsed from the command line. */
  static final class Options {
    final List<Path> files = new ArrayList<>();
    SparkStreamCodec codec = SparkStreamCodec.LZ4;
    String format = "auto";
    Integer partition;
    boolean rows;
    long limit = Long.MAX_VALUE;
    List<String> names = new ArrayList<>();
    boolean verbose;
    boolean help;
  }

  /** A command line the tool cannot run. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  static Options parse(String[] args) throws UsageException {
    Options options = new Options();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      }
      switch (arg) {
        case "-h":
        case "--help":
          options.help = true;
          break;
        case "--rows":
          options.rows = true;
          break;
        case "--verbose":
          options.verbose = true;
          break;
        case "--codec":
        case "--format":
        case "--partition":
        case "--limit":
        case "--names":
          if (value == null) {
            if (i + 1 >= args.length) {
              throw new UsageException(arg + " needs a value");
            }
            value = args[++i];
          }
          option(options, arg, value);
          break;
        default:
          if (arg.startsWith("-") && !arg.equals("-")) {
            throw new UsageException("unknown option " + arg);
          }
          options.files.add(Paths.get(arg));
      }
    }
    if (!options.help && options.files.isEmpty()) {
      throw new UsageException("no FILE given");
    }
    return options;
  }

  private static void option(Options options, String name, String value) throws UsageException {
    try {
      switch (name) {
        case "--codec":
          options.codec = SparkStreamCodec.forName(value);
          break;
        case "--format":
          if (!Arrays.asList("auto", "shuffle", "broadcast").contains(value)) {
            throw new UsageException("--format must be auto, shuffle or broadcast, not " + value);
          }
          options.format = value;
          break;
        case "--partition":
          options.partition = Integer.parseInt(value);
          break;
        case "--limit":
          options.limit = Long.parseLong(value);
          if (options.limit < 0) {
            throw new UsageException("--limit must not be negative");
          }
          break;
        default:
          options.names = Arrays.asList(value.split(",", -1));
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException(name + ": " + e.getMessage());
    }
  }

  /**
   * Runs the tool.
   *
   * @return the exit status: 0, 1 when a file cannot be read, 2 for a usage error
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = parse(args);
    } catch (UsageException e) {
      err.println("dump: " + e.getMessage());
      err.println("Try --help.");
      return 2;
    }
    if (options.help) {
      out.println(USAGE);
      return 0;
    }
    Report report =
        options.rows
            ? new Report(err, out, options.names, options.limit)
            : new Report(out, null, options.names, options.limit);
    try {
      long rows = 0;
      try (BufferAllocator allocator = new RootAllocator()) {
        for (Path file : options.files) {
          report.startFile();
          rows += dump(file, options, allocator, report);
        }
      }
      if (options.files.size() > 1) {
        report.line("all %d files: %d rows", options.files.size(), rows);
      }
      return 0;
    } catch (IOException e) {
      fail(err, oneLine(e.getMessage()), e, options.verbose);
      return 1;
    } catch (UsageException e) {
      // An option that does not fit the file, found once the file was opened.
      err.println("dump: " + oneLine(e.getMessage()));
      err.println("Try --help.");
      return 2;
    } catch (RuntimeException e) {
      // Not a reading error Quiver names: a bug. Say so, without the stack unless asked.
      fail(err, "unexpected " + oneLine(e.toString()), e, options.verbose);
      return 1;
    } finally {
      out.flush();
      err.flush();
    }
  }

  private static void fail(PrintStream err, String message, Throwable e, boolean verbose) {
    err.println("error: " + message);
    if (verbose) {
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(trace);
    } else if (!(e instanceof IOException)) {
      err.println("(--verbose prints the stack trace)");
    }
  }

  private static String oneLine(String message) {
    return message == null ? "(no message)" : message.replaceAll("\\s*[\\r\\n]+\\s*", " ");
  }

  private static long dump(Path file, Options options, BufferAllocator allocator, Report report)
      throws IOException, UsageException {
    if (!Files.isRegularFile(file)) {
      throw new IOException(file + ": no such file");
    }
    Path data = file;
    Path index = null;
    String name = file.getFileName().toString();
    if (name.endsWith(".index")) {
      data = sibling(file, name.substring(0, name.length() - ".index".length()) + ".data");
      index = file;
      if (!Files.isRegularFile(data)) {
        throw new IOException(file + " is a shuffle index, but " + data + " is not beside it");
      }
    } else if (name.endsWith(".data")) {
      Path candidate =
          sibling(file, name.substring(0, name.length() - ".data".length()) + ".index");
      index = Files.isRegularFile(candidate) ? candidate : null;
    }
    String format = options.format;
    if (format.equals("broadcast")) {
      if (name.endsWith(".index")) {
        throw new UsageException(file + " is a shuffle index, not a broadcast value");
      }
      index = null;
    }
    if (Files.size(data) == 0 && index == null) {
      throw new IOException(data + " is empty: neither shuffle blocks nor a broadcast value");
    }
    boolean blocks = format.equals("shuffle");
    if (format.equals("auto")) {
      blocks = index != null || ShuffleFileDump.startsWithBlockHeader(data);
    }
    if (blocks) {
      return new ShuffleFileDump(data, index, options.partition, allocator, report).run();
    }
    if (options.partition != null) {
      throw new UsageException("--partition applies to shuffle files only");
    }
    try {
      return new BroadcastValueDump(data, options.codec, allocator, report).run();
    } catch (IOException e) {
      if (!format.equals("auto") || SparkFraming.of(options.codec).startsLikeStream(head(data))) {
        throw e;
      }
      throw new IOException(
          data
              + " is neither a shuffle file (no index beside it, no block header at offset 0)"
              + " nor a "
              + options.codec
              + " broadcast value: "
              + e.getMessage(),
          e);
    }
  }

  /** The first bytes of {@code file}: enough for any magic number. */
  private static byte[] head(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return in.readNBytes(16);
    }
  }

  private static Path sibling(Path file, String name) {
    Path parent = file.toAbsolutePath().getParent();
    return parent.resolve(name);
  }
}
