package dev.quiver.fuzz;

import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.Blocks;
import dev.quiver.shuffle.ShuffleBlockDecoder;
import dev.quiver.testing.BigEndianStreams;
import dev.quiver.testing.BodyCompressedStreams;
import dev.quiver.testing.Bytes;
import dev.quiver.testing.Codecs;
import dev.quiver.testing.CometFiles;
import dev.quiver.testing.EncodedColumns;
import dev.quiver.testing.EveryType;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/**
 * Writes the fuzz targets' seed corpus: valid inputs of every supported type, in each target's
 * input layout, under {@code src/test/resources/dev/quiver/fuzz/<Target>Inputs/<method>/} (where
 * Jazzer looks for them; they run as plain tests without {@code JAZZER_FUZZ}). Made from {@link
 * TestData} and small cuts of the Comet 1.2.0 files ({@link CometFiles}); regenerate with {@code
 * dev/fuzz --seeds}. The dump tool's target lives in {@code dev/tools}, and so does its corpus
 * ({@code DumpSeedCorpus}, from the inputs made here).
 *
 * <pre>SeedCorpus RESOURCES_DIR</pre>
 */
public final class SeedCorpus {

  private static final int ROWS = 12;
  private static final int COMET_ROWS = 16;
  private static final long DICTIONARY_ID = 3;

  private final Path root;
  private final BufferAllocator allocator = new RootAllocator();
  private long bytes;
  private int files;

  SeedCorpus(Path root) {
    this.root = root;
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: SeedCorpus RESOURCES_DIR");
      System.exit(2);
    }
    SeedCorpus corpus = new SeedCorpus(Paths.get(args[0]));
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
        byte[] compressed = Codecs.compress(codec, s.getValue());
        write(
            ipc.resolve("compressedBytes/" + name),
            prefixed(FuzzCodecs.selector(codec), compressed));
      }
    }

    // Arrow IPC body compression (buffers compressed one by one inside the stream), the types
    // Spark has none of (unions, run-end encoding, views), plain and body-compressed, and
    // big-endian streams, under Spark's none (the IPC decoder's own input) and lz4 (through the
    // codec too).
    Map<String, byte[]> withinStream = bodyCompressedStreams();
    withinStream.putAll(encodedTypeStreams());
    withinStream.putAll(bigEndianStreams(streams.get("dictionary")));
    for (Map.Entry<String, byte[]> s : withinStream.entrySet()) {
      for (StreamCodec codec : Arrays.asList(SparkStreamCodec.NONE, SparkStreamCodec.LZ4)) {
        String name = s.getKey() + "-" + codecName(codec);
        write(
            ipc.resolve("uncompressedStream/" + name),
            prefixed(FuzzCodecs.selector(codec), s.getValue()));
        write(
            ipc.resolve("compressedBytes/" + name),
            prefixed(FuzzCodecs.selector(codec), Codecs.compress(codec, s.getValue())));
      }
    }

    Path lz4 = clean("SparkLz4FuzzTestInputs");
    for (Map.Entry<String, byte[]> s : streams.entrySet()) {
      write(
          lz4.resolve("decompress/" + s.getKey()),
          Codecs.compress(SparkStreamCodec.LZ4, s.getValue()));
    }
    // Two streams back to back, as Spark allows, and a stream of one byte per block boundary.
    byte[] one = Codecs.compress(SparkStreamCodec.LZ4, streams.get("build-side"), 0, 64);
    write(lz4.resolve("decompress/concatenated"), Bytes.concat(one, one));

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
      byte[] compressed = Codecs.compress(codec, build);
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
    try (VectorSchemaRoot root = TestData.zeroColumns(allocator, 5)) {
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

  /**
   * Streams whose buffers Arrow Java compresses one by one (body compression), LZ4 frame and zstd:
   * two batches of every type (the small one's buffers stored uncompressed, the larger one's
   * compressed), and a dictionary-encoded column.
   */
  Map<String, byte[]> bodyCompressedStreams() throws IOException {
    Map<String, byte[]> streams = new LinkedHashMap<>();
    for (CompressionUtil.CodecType type :
        Arrays.asList(CompressionUtil.CodecType.LZ4_FRAME, CompressionUtil.CodecType.ZSTD)) {
      String c = type == CompressionUtil.CodecType.ZSTD ? "zstd" : "lz4";
      try (VectorSchemaRoot a = TestData.allTypes(allocator, 3, 1);
          VectorSchemaRoot b = TestData.allTypes(allocator, 40, 2)) {
        streams.put("body-" + c + "-all-types", bodyCompressed(type, null, a, b));
      }
      Dictionary colors = TestData.colorDictionary(allocator, DICTIONARY_ID);
      try (VectorSchemaRoot root =
          TestData.dictionaryIndices(allocator, DICTIONARY_ID, 0, 4 * ROWS)) {
        streams.put(
            "body-" + c + "-dictionary",
            bodyCompressed(type, new DictionaryProvider.MapDictionaryProvider(colors), root));
      } finally {
        colors.getVector().close();
      }
    }
    return streams;
  }

  /**
   * Big-endian twins ({@link BigEndianStreams}) of little-endian streams: every type in one batch,
   * uncompressed and with zstd body compression, the dictionary-encoded column of {@code
   * dictionary}, both unions with a run-end encoded column, and the four view types.
   */
  Map<String, byte[]> bigEndianStreams(byte[] dictionary) throws IOException {
    Map<String, byte[]> streams = new LinkedHashMap<>();
    byte[] everyType;
    // One small batch: the schema's many columns make the stream large for a seed.
    try (VectorSchemaRoot root = EveryType.root(allocator, 8, 1)) {
      everyType = ArrowIpc.encode(root, null, StreamCodec.NONE);
    }
    streams.put("big-endian-every-type", BigEndianStreams.twin(everyType, allocator));
    streams.put("big-endian-zstd-every-type", BigEndianStreams.twin(everyType, allocator, true));
    streams.put("big-endian-dictionary", BigEndianStreams.twin(dictionary, allocator));
    try (VectorSchemaRoot root = EncodedColumns.unionsAndRuns(allocator)) {
      byte[] little = ArrowIpc.encode(root, null, StreamCodec.NONE);
      streams.put("big-endian-unions-runs", BigEndianStreams.twin(little, allocator));
    }
    if (EncodedColumns.viewTypesKnown()) {
      try (VectorSchemaRoot views = EncodedColumns.views(allocator)) {
        byte[] little = ArrowIpc.encode(views, null, StreamCodec.NONE);
        streams.put("big-endian-views", BigEndianStreams.twin(little, allocator));
      }
    }
    return streams;
  }

  /**
   * Sparse and dense unions and a run-end encoded column, and the four view types (where this Arrow
   * knows them: the committed seeds come from Arrow 18), as Arrow Java writes them, plain and with
   * zstd body compression.
   */
  Map<String, byte[]> encodedTypeStreams() throws IOException {
    Map<String, byte[]> streams = new LinkedHashMap<>();
    try (VectorSchemaRoot root = EncodedColumns.unionsAndRuns(allocator)) {
      streams.put("unions-runs", ArrowIpc.encode(root, null, StreamCodec.NONE));
      streams.put(
          "body-zstd-unions-runs", bodyCompressed(CompressionUtil.CodecType.ZSTD, null, root));
    }
    if (EncodedColumns.viewTypesKnown()) {
      try (VectorSchemaRoot root = EncodedColumns.views(allocator)) {
        streams.put("views", ArrowIpc.encode(root, null, StreamCodec.NONE));
        streams.put("body-zstd-views", bodyCompressed(CompressionUtil.CodecType.ZSTD, null, root));
      }
    }
    return streams;
  }

  private byte[] bodyCompressed(
      CompressionUtil.CodecType type, DictionaryProvider dictionaries, VectorSchemaRoot... batches)
      throws IOException {
    return BodyCompressedStreams.write(allocator, type, dictionaries, batches);
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

  /** {@link TestData#dictionaryIndices}: k, and d, indices into a three-string dictionary. */
  private byte[] dictionaryStream() throws IOException {
    Dictionary colors = TestData.colorDictionary(allocator, DICTIONARY_ID);
    try (VectorSchemaRoot root = TestData.dictionaryIndices(allocator, DICTIONARY_ID, 0, ROWS)) {
      return ArrowIpc.encode(
          root, new DictionaryProvider.MapDictionaryProvider(colors), StreamCodec.NONE);
    } finally {
      colors.getVector().close();
    }
  }

  /** The first rows of Comet's broadcast value (empty names, non-nullable fields with nulls). */
  private byte[] cometBroadcast() throws IOException {
    byte[] value = Files.readAllBytes(CometFiles.broadcast());
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
    for (BlockCodec codec : Codecs.blockCodecs()) {
      String c = codec.codecName();
      try (VectorSchemaRoot all = TestData.allTypes(allocator, ROWS, 3)) {
        blocks.put("all-types-" + c, Blocks.write(codec, all));
      }
      try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, ROWS);
          VectorSchemaRoot b = TestData.buildSide(allocator, ROWS, 3);
          VectorSchemaRoot zero = TestData.zeroColumns(allocator, 4)) {
        blocks.put("three-blocks-" + c, Blocks.write(codec, a, zero, b));
      }
      try (VectorSchemaRoot cut = cometShuffleRows()) {
        blocks.put("comet-rows-" + c, Blocks.write(codec, cut));
      }
    }
    blocks.put("comet-lz4-block-cut", cometBlockCut("lz4", 4096));
    blocks.put("comet-zstd-variant-cut", cometBlockCut("zstd", 1024));
    return blocks;
  }

  /** The first rows of Comet's first lz4 block, transferred out of the decoder. */
  private VectorSchemaRoot cometShuffleRows() throws IOException {
    byte[] data = Files.readAllBytes(CometFiles.shuffleData("lz4", CometFiles.MAPS.get(0)));
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
        Files.newInputStream(CometFiles.shuffleData(codec, CometFiles.MAPS.get(0)))) {
      return in.readNBytes(keep);
    }
  }

  private static String codecName(StreamCodec codec) {
    return FuzzCodecs.describe(codec).replace(' ', '-');
  }

  static byte[] prefixed(byte first, byte[] rest) {
    return Bytes.concat(new byte[] {first}, rest);
  }

  /**
   * Empties (or makes) the Inputs folder of a target class, but for the fuzzers' findings ({@code
   * finding-*}): inputs committed by hand after a fix, which no generator writes again.
   */
  Path clean(String folder) throws IOException {
    Path dir = root.resolve("dev/quiver/fuzz").resolve(folder);
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        List<Path> generated = new ArrayList<>();
        paths
            .filter(
                p -> Files.isRegularFile(p) && !p.getFileName().toString().startsWith("finding-"))
            .forEach(generated::add);
        for (Path p : generated) {
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
