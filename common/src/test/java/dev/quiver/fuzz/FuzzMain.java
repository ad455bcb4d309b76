package dev.quiver.fuzz;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs one fuzz target in this JVM, for {@code dev/fuzz} (Jazzer fuzzes one target per JVM). With
 * {@code JAZZER_FUZZ=1} in the environment it fuzzes; without, it runs the target's seeds.
 *
 * <pre>
 * FuzzMain TARGET SECONDS WORK_DIR [SEED]
 *   TARGET    dev.quiver.fuzz.SomeFuzzTest#method
 *   SECONDS   the fuzzing budget (libFuzzer's -max_total_time)
 *   WORK_DIR  where the generated corpus (.cifuzz-corpus) and crashing inputs (crash-*, ...) go
 *   SEED      libFuzzer's -seed: a fixed one makes a run repeat the same inputs in the same order
 *             (as far as its time allows); 0 or none, a random one
 * </pre>
 *
 * Exit status 0 when the target passed, 1 on a finding (libFuzzer exits by itself, non-zero, when
 * the JVM crashes).
 */
public final class FuzzMain {

  /** What Jazzer instruments for coverage: Quiver and the Arrow and codec code it drives. */
  static final String INSTRUMENTED =
      "dev.quiver.**:org.apache.arrow.vector.**:org.apache.arrow.flatbuf.**"
          + ":org.apache.arrow.memory.**:net.jpountz.**:org.xerial.snappy.**"
          + ":com.github.luben.zstd.**";

  private FuzzMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3 || args.length > 4 || !args[0].contains("#")) {
      System.err.println("usage: FuzzMain CLASS#METHOD SECONDS WORK_DIR [SEED]");
      System.exit(2);
    }
    String target = args[0];
    long seconds = Long.parseLong(args[1]);
    Path work = Paths.get(args[2]).toAbsolutePath();
    long seed = args.length == 4 ? Long.parseLong(args[3]) : 0;
    Files.createDirectories(work);
    LauncherDiscoveryRequest request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(
                // Every target takes the fuzzer's bytes.
                DiscoverySelectors.selectMethod(
                    target.contains("(") ? target : target + "(byte[])"))
            // libFuzzer's flags: argv[0], then these after the annotation's (the last one wins).
            .configurationParameter("jazzer.internal.arg.0", "fuzz")
            .configurationParameter("jazzer.internal.arg.1", "-max_total_time=" + seconds)
            .configurationParameter(
                "jazzer.internal.arg.2",
                "-artifact_prefix=" + work + work.getFileSystem().getSeparator())
            .configurationParameter("jazzer.internal.arg.3", "-seed=" + seed)
            .configurationParameter("jazzer.internal.basedir", work.toString())
            .configurationParameter("jazzer.instrumentation_includes", INSTRUMENTED)
            .build();
    Launcher launcher = LauncherFactory.create();
    SummaryGeneratingListener summary = new SummaryGeneratingListener();
    launcher.execute(request, summary);
    TestExecutionSummary result = summary.getSummary();
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
    result.printFailuresTo(out, 40);
    result.printTo(out);
    boolean passed =
        result.getTotalFailureCount() == 0
            && result.getTestsSucceededCount() > 0
            && result.getTestsAbortedCount() == 0;
    System.exit(passed ? 0 : 1);
  }
}
