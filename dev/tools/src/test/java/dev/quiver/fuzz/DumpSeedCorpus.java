package dev.quiver.fuzz;

import dev.quiver.codec.SparkStreamCodec;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

/**
 * Writes {@link DumpFuzzTest}'s seeds, in its input layouts, from the streams and block files that
 * common's {@link SeedCorpus} makes for the decoders' targets: under {@code
 * src/test/resources/dev/quiver/fuzz/DumpFuzzTestInputs/} of this module. Run by {@code dev/fuzz
 * --seeds}.
 *
 * <pre>DumpSeedCorpus RESOURCES_DIR</pre>
 */
public final class DumpSeedCorpus {

  private DumpSeedCorpus() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: DumpSeedCorpus RESOURCES_DIR");
      System.exit(2);
    }
    SeedCorpus corpus = new SeedCorpus(Paths.get(args[0]));
    try {
      write(corpus);
    } finally {
      corpus.close();
    }
    System.out.println(corpus.summary());
  }

  private static void write(SeedCorpus corpus) throws IOException {
    Map<String, byte[]> streams = corpus.ipcStreams();
    Map<String, byte[]> blocks = corpus.shuffleStreams();
    Path dump = corpus.clean("DumpFuzzTestInputs");
    for (Map.Entry<String, byte[]> b : blocks.entrySet()) {
      corpus.write(
          dump.resolve("shuffleFile/" + b.getKey()), SeedCorpus.prefixed((byte) 0, b.getValue()));
    }
    corpus.write(dump.resolve("shuffleFile/indexed"), indexedShuffleFile(blocks));
    for (Map.Entry<String, byte[]> s : streams.entrySet()) {
      for (SparkStreamCodec codec : DumpFuzzTest.SPARK_CODECS) {
        String name = s.getKey() + "-" + codec;
        byte[] compressed = FuzzCodecs.compress(codec, s.getValue(), 0, s.getValue().length);
        corpus.write(
            dump.resolve("broadcastValue/" + name),
            SeedCorpus.prefixed(DumpFuzzTest.broadcastSelector(codec, false), compressed));
        corpus.write(
            dump.resolve("broadcastValue/" + name + "-by-target"),
            SeedCorpus.prefixed(DumpFuzzTest.broadcastSelector(codec, true), s.getValue()));
      }
    }
  }

  /** Byte 0: 4 index offsets; a Spark index (big-endian) of three partitions; then the data. */
  private static byte[] indexedShuffleFile(Map<String, byte[]> blocks) throws IOException {
    byte[][] partitions = {
      blocks.get("three-blocks-lz4"), new byte[0], blocks.get("comet-rows-snappy")
    };
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    DataOutputStream index = new DataOutputStream(out);
    out.write(partitions.length + 1);
    long offset = 0;
    index.writeLong(offset);
    for (byte[] p : partitions) {
      offset += p.length;
      index.writeLong(offset);
    }
    for (byte[] p : partitions) {
      out.write(p);
    }
    return out.toByteArray();
  }
}
