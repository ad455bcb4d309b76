package dev.quiver.fuzz;

import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.ipc.SparkStreamCodec;
import dev.quiver.ipc.StreamCodec;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.ShuffleBlockDecoder;
import dev.quiver.shuffle.ShuffleBlockWriter;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes the fuzz targets' seed corpus: valid inputs of every supported type, in each target's
 * input layout, under {@code src/test/resources/dev/quiver/fuzz/<Target>Inputs/<method>/} (where
 * Jazzer looks for them; they run as plain tests without {@code JAZZER_FUZZ}). Made from {@link
 * TestData} and small cuts of the Comet 1.2.0 files; regenerate with {@code dev/fuzz --seeds}. The
 * dump tool's target lives in {@code dev/tools}, and so does its corpus ({@code DumpSeedCorpus},
 * from the inputs made here).
 *
 * <pre>SeedCorpus RESOURCES_DIR COMET_DIR</pre>
 */
public final class SeedCorpus {

  private static final int ROWS = 12;
  private static final int COMET_ROWS = 16;
  private static final long DICTIONARY_ID = 3;

  private final Path root;
  private final Path comet;
  private final BufferAllocator allocator = new RootAllocator();
  private long bytes;
  private int files;

  SeedCorpus(Path root, Path comet) {
    this.root = root;
    this.comet = comet;
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: SeedCorpus RESOURCES_DIR COMET_DIR");
      System.exit(2);
    }
    SeedCorpus corpus = new SeedCorpus(Paths.get(args[0]), Paths.get(args[1]));
    corpus.writeAll();
    corpus.close();
    System.out.println(corpus.summary());
  }

  /** What has been written: files and bytes. */
  String summary() {
    return String.format("%d seed files, %d bytes", files, bytes);
  }

  void close() {
    allocator.close();
  }

  private void writeAll() throws IOException {
    Map<String, byte[]> streams = ipcStreams();
    Map<String, byte[]> blocks = shuffleStreams();

    Path ipc = clean("IpcDecodeFuzzTestInputs");
    for (Map.Entry<String, byte[]> s : streams.entrySet()) {
      for (StreamCodec codec : FuzzCodecs.CODECS) {
        if (codec == BlockCodec.NONE) {
          continue; // the same bytes as Spark's none
        }
        String name = s.getKey() + "-" + codecName(codec);
        write(
            ipc.resolve("uncompressedStream/" + name),
            prefixed(FuzzCodecs.selector(codec), s.getValue()));
        byte[] compressed = FuzzCodecs.compress(codec, s.getValue(), 0, s.getValue().length);
        write(
            ipc.resolve("compressedBytes/" + name),
            prefixed(FuzzCodecs.selector(codec), compressed));
      }
    }

    Path lz4 = clean("SparkLz4FuzzTestInputs");
    for (Map.Entry<String, byte[]> s : streams.entrySet()) {
      write(
          lz4.resolve("decompress/" + s.getKey()),
          FuzzCodecs.compress(SparkStreamCodec.LZ4, s.getValue(), 0, s.getValue().length));
    }
    // Two streams back to back, as Spark allows, and a stream of one byte per block boundary.
    byte[] one = FuzzCodecs.compress(SparkStreamCodec.LZ4, streams.get("build-side"), 0, 64);
    write(lz4.resolve("decompress/concatenated"), concat(one, one));

    // Shared by both shuffle targets: files directly in the class's Inputs folder.
    Path shuffle = clean("ShuffleFuzzTestInputs");
    for (Map.Entry<String, byte[]> b : blocks.entrySet()) {
      write(shuffle.resolve(b.getKey()), b.getValue());
    }

    Path cache = clean("BroadcastCacheFuzzTestInputs");
    for (StreamCodec codec : FuzzCodecs.CODECS) {
      String c = codecName(codec);
      byte[] build = streams.get("build-side");
      write(
          cache.resolve("openAndRead/build-side-" + c),
          BroadcastCacheFuzzTest.layout(
              BroadcastCacheFuzzTest.COMPRESS_BY_TARGET, codec, Collections.singletonList(build)));
      byte[] compressed = FuzzCodecs.compress(codec, build, 0, build.length);
      write(
          cache.resolve("openAndRead/precompressed-" + c),
          BroadcastCacheFuzzTest.layout(0, codec, Collections.singletonList(compressed)));
    }
    write(
        cache.resolve("openAndRead/three-streams"),
        BroadcastCacheFuzzTest.layout(
            BroadcastCacheFuzzTest.COMPRESS_BY_TARGET,
            SparkStreamCodec.LZ4,
            Arrays.asList(
                streams.get("build-side"),
                streams.get("zero-columns"),
                streams.get("no-batches"))));
    write(
        cache.resolve("openAndRead/dictionary"),
        BroadcastCacheFuzzTest.layout(
            BroadcastCacheFuzzTest.COMPRESS_BY_TARGET,
            SparkStreamCodec.ZSTD,
            Collections.singletonList(streams.get("dictionary"))));
    write(
        cache.resolve("openAndRead/all-types-sharing-off"),
        BroadcastCacheFuzzTest.layout(
            BroadcastCacheFuzzTest.COMPRESS_BY_TARGET | BroadcastCacheFuzzTest.SHARING_OFF,
            SparkStreamCodec.SNAPPY,
            Collections.singletonList(streams.get("all-types"))));
  }

  /** Uncompressed IPC streams of every supported shape. */
  Map<String, byte[]> ipcStreams() throws IOException {
    Map<String, byte[]> streams = new LinkedHashMap<>();
    try (VectorSchemaRoot a = TestData.allTypes(allocator, ROWS, 1);
        VectorSchemaRoot b = TestData.allTypes(allocator, 3, 2)) {
      streams.put("all-types", twoBatches(a, b));
    }
    try (VectorSchemaRoot root = TestData.buildSide(allocator, 0, ROWS)) {
      streams.put("build-side", ArrowIpc.encode(root, null, StreamCodec.NONE));
    }
    try (VectorSchemaRoot root =
        VectorSchemaRoot.create(new Schema(Collections.emptyList()), allocator)) {
      root.setRowCount(5);
      streams.put("zero-columns", ArrowIpc.encode(root, null, StreamCodec.NONE));
    }
    streams.put(
        "no-batches",
        ArrowIpc.encode(
            TestData.buildSideSchema(),
            Collections.emptyList(),
            new DictionaryProvider.MapDictionaryProvider(),
            StreamCodec.NONE,
            allocator));
    streams.put("dictionary", dictionaryStream());
    streams.put("comet-broadcast", cometBroadcast());
    return streams;
  }

  private byte[] twoBatches(VectorSchemaRoot a, VectorSchemaRoot b) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(a.getSchema(), allocator);
        org.apache.arrow.vector.ipc.ArrowStreamWriter writer =
            new org.apache.arrow.vector.ipc.ArrowStreamWriter(root, null, out)) {
      writer.start();
      for (VectorSchemaRoot batch : Arrays.asList(a, b)) {
        try (org.apache.arrow.vector.ipc.message.ArrowRecordBatch record =
            new org.apache.arrow.vector.VectorUnloader(batch).getRecordBatch()) {
          new VectorLoader(root).load(record);
        }
        writer.writeBatch();
      }
      writer.end();
    }
    return out.toByteArray();
  }

  /** k: int64; d: int32 indices into a three-string dictionary. */
  private byte[] dictionaryStream() throws IOException {
    DictionaryEncoding encoding =
        new DictionaryEncoding(DICTIONARY_ID, false, new ArrowType.Int(32, true));
    Schema schema =
        new Schema(
            Arrays.asList(
                new Field("k", FieldType.nullable(new ArrowType.Int(64, true)), null),
                new Field("d", new FieldType(true, new ArrowType.Int(32, true), encoding), null)));
    try (VarCharVector colors = new VarCharVector("colors", allocator);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      colors.allocateNew();
      for (int i = 0; i < 3; i++) {
        colors.setSafe(i, ("color-" + i).getBytes(StandardCharsets.UTF_8));
      }
      colors.setValueCount(3);
      DictionaryProvider.MapDictionaryProvider dictionaries =
          new DictionaryProvider.MapDictionaryProvider();
      dictionaries.put(new Dictionary(colors, encoding));
      root.allocateNew();
      for (int r = 0; r < ROWS; r++) {
        ((BigIntVector) root.getVector("k")).setSafe(r, r);
        ((IntVector) root.getVector("d")).setSafe(r, r % 3);
      }
      root.setRowCount(ROWS);
      return ArrowIpc.encode(root, dictionaries, StreamCodec.NONE);
    }
  }

  /** The first rows of Comet's broadcast value (empty names, non-nullable fields with nulls). */
  private byte[] cometBroadcast() throws IOException {
    byte[] value = Files.readAllBytes(comet.resolve("broadcast-0.bin"));
    try (DecodedStream stream =
            ArrowIpc.decode(value, SparkStreamCodec.LZ4, allocator, "comet broadcast");
        VectorSchemaRoot full = VectorSchemaRoot.create(stream.schema(), allocator)) {
      new VectorLoader(full).load(stream.batches().get(0));
      try (VectorSchemaRoot cut = full.slice(0, COMET_ROWS)) {
        return ArrowIpc.encode(cut, null, StreamCodec.NONE);
      }
    }
  }

  /** Streams of shuffle blocks: every codec, every shape, Comet's own rows and its zstd variant. */
  Map<String, byte[]> shuffleStreams() throws IOException {
    Map<String, byte[]> blocks = new LinkedHashMap<>();
    for (BlockCodec codec :
        new BlockCodec[] {BlockCodec.NONE, BlockCodec.LZ4, BlockCodec.ZSTD, BlockCodec.SNAPPY}) {
      String c = codec.codecName();
      try (VectorSchemaRoot all = TestData.allTypes(allocator, ROWS, 3)) {
        blocks.put("all-types-" + c, blocks(codec, all));
      }
      try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, ROWS);
          VectorSchemaRoot b = TestData.buildSide(allocator, ROWS, 3);
          VectorSchemaRoot zero =
              VectorSchemaRoot.create(new Schema(Collections.emptyList()), allocator)) {
        zero.setRowCount(4);
        blocks.put("three-blocks-" + c, blocks(codec, a, zero, b));
      }
      try (VectorSchemaRoot cut = cometShuffleRows()) {
        blocks.put("comet-rows-" + c, blocks(codec, cut));
      }
    }
    blocks.put("comet-lz4-block-cut", cometBlockCut("lz4", 4096));
    blocks.put("comet-zstd-variant-cut", cometBlockCut("zstd", 1024));
    return blocks;
  }

  private byte[] blocks(BlockCodec codec, VectorSchemaRoot... roots) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ShuffleBlockWriter writer = new ShuffleBlockWriter(out, codec);
    for (VectorSchemaRoot root : roots) {
      writer.write(root);
    }
    return out.toByteArray();
  }

  /** The first rows of Comet's first lz4 block, transferred out of the decoder. */
  private VectorSchemaRoot cometShuffleRows() throws IOException {
    byte[] data = Files.readAllBytes(comet.resolve("shuffle/lz4/shuffle_3_38_0.data"));
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(data), allocator)) {
      if (!decoder.next()) {
        throw new IOException("no block in the Comet file");
      }
      return decoder.root().slice(0, COMET_ROWS);
    }
  }

  /** The first {@code keep} bytes of Comet's first block of {@code codec}: a truncated block. */
  private byte[] cometBlockCut(String codec, int keep) throws IOException {
    try (InputStream in =
        Files.newInputStream(comet.resolve("shuffle/" + codec + "/shuffle_3_38_0.data"))) {
      return in.readNBytes(keep);
    }
  }

  private static String codecName(StreamCodec codec) {
    return FuzzCodecs.describe(codec).replace(' ', '-');
  }

  static byte[] prefixed(byte first, byte[] rest) {
    byte[] bytes = new byte[rest.length + 1];
    bytes[0] = first;
    System.arraycopy(rest, 0, bytes, 1, rest.length);
    return bytes;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] bytes = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, bytes, a.length, b.length);
    return bytes;
  }

  /** Empties (or makes) the Inputs folder of a target class. */
  Path clean(String folder) throws IOException {
    Path dir = root.resolve("dev/quiver/fuzz").resolve(folder);
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        List<Path> all = new ArrayList<>();
        paths.forEach(all::add);
        all.sort(Comparator.reverseOrder());
        for (Path p : all) {
          Files.delete(p);
        }
      }
    }
    Files.createDirectories(dir);
    return dir;
  }

  void write(Path file, byte[] content) throws IOException {
    Files.createDirectories(file.getParent());
    Files.write(file, content);
    bytes += content.length;
    files++;
  }
}
