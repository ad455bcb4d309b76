package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.CometFiles;
import dev.quiver.testing.CountingInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reads the native shuffle output of a real engine, Comet 1.2.0: two map tasks of {@code SELECT *
 * FROM dim DISTRIBUTE BY k} into 16 partitions. Together they hold exactly the 20,000 rows of
 * {@code dim}, 11 columns with {@code k} first.
 */
@ExtendWith(AllocatorExtension.class)
class CometShuffleFilesTest {

  private static final int DIM_FIELDS = 11;

  private static Set<Long> dimKeys;

  @BeforeAll
  static void readDim() throws IOException {
    dimKeys = readDimKeys(CometFiles.dimRows());
    assertEquals(CometFiles.DIM_ROWS, dimKeys.size());
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void decoderReadsEveryRowOfBothMaps(String codec, BufferAllocator allocator) throws IOException {
    Set<Long> keys = new HashSet<>();
    long rows = 0;
    for (String map : CometFiles.MAPS) {
      CometTestFiles.MapOutput output = CometTestFiles.read(CometFiles.shuffleFolder(codec), map);
      for (int p = 0; p < CometFiles.PARTITIONS; p++) {
        CountingInputStream in =
            new CountingInputStream(new ByteArrayInputStream(output.partition(p)));
        String source = codec + "/" + map + " partition " + p;
        try (ShuffleBlockDecoder decoder =
            new ShuffleBlockDecoder(
                in, allocator, null, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, source)) {
          while (decoder.next()) {
            VectorSchemaRoot batch = decoder.root();
            assertEquals(DIM_FIELDS, batch.getSchema().getFields().size());
            assertEquals(codec, decoder.codec().codecName());
            rows += batch.getRowCount();
            collectKeys(batch, keys);
          }
        }
        assertEquals(0, in.counts().availableCalls());
      }
    }
    assertEquals(CometFiles.DIM_ROWS, rows);
    assertEquals(dimKeys, keys, "the union of both maps is dim");
  }

  @ParameterizedTest
  @ValueSource(strings = {"lz4", "snappy"})
  void rawBlockIteratorHandsOverEveryBlockOfBothMaps(String codec, BufferAllocator allocator)
      throws IOException {
    long rows = 0;
    int blocks = 0;
    for (String map : CometFiles.MAPS) {
      CometTestFiles.MapOutput output = CometTestFiles.read(CometFiles.shuffleFolder(codec), map);
      for (int p = 0; p < CometFiles.PARTITIONS; p++) {
        try (RawBlockIterator raw =
            new RawBlockIterator(new ByteArrayInputStream(output.partition(p)))) {
          while (raw.next()) {
            blocks++;
            assertEquals(DIM_FIELDS, raw.fieldCount());
            assertEquals(codec, raw.codec().codecName());
            ByteBuffer body = raw.body();
            assertTrue(body.isDirect());
            byte[] copy = new byte[body.remaining()];
            body.get(copy);
            // What a native engine would do with the body, done here with the JVM codecs.
            try (DecodedStream decoded = ArrowIpc.decode(copy, raw.codec(), allocator, map);
                VectorSchemaRoot batch = VectorSchemaRoot.create(decoded.schema(), allocator)) {
              assertEquals(1, decoded.batches().size());
              new VectorLoader(batch).load(decoded.batches().get(0));
              rows += batch.getRowCount();
            }
          }
        }
      }
    }
    assertEquals(CometFiles.DIM_ROWS, rows);
    assertEquals(2 * CometFiles.PARTITIONS, blocks, "one block per partition per map");
  }

  @Test
  void cometOffsetsAsLengthsZstdIsRejectedNamingTheSetting(BufferAllocator allocator)
      throws IOException {
    CometTestFiles.MapOutput output =
        CometTestFiles.read(CometFiles.shuffleFolder("zstd"), CometFiles.MAPS.get(0));
    int p = firstNonEmptyPartition(output);
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(new ByteArrayInputStream(output.partition(p)), allocator)) {
      assertRejectedAsOffsetsAsLengths(
          assertThrows(ShuffleCorruptionException.class, decoder::next));
    }
    try (RawBlockIterator raw =
        new RawBlockIterator(new ByteArrayInputStream(output.partition(p)))) {
      assertRejectedAsOffsetsAsLengths(assertThrows(ShuffleCorruptionException.class, raw::next));
    }
  }

  private static void assertRejectedAsOffsetsAsLengths(ShuffleCorruptionException e) {
    assertTrue(
        e.getMessage().contains(BlockCodec.COMET_OFFSETS_AS_LENGTHS_SETTING), e.getMessage());
    assertTrue(e.getMessage().contains("DA 53 54 44"), e.getMessage());
    assertTrue(e.getMessage().contains("block 0 at stream offset 0"), e.getMessage());
    assertEquals(0, e.blockIndex());
    assertEquals(0, e.blockOffset());
  }

  private static int firstNonEmptyPartition(CometTestFiles.MapOutput output) {
    for (int p = 0; p < CometFiles.PARTITIONS; p++) {
      if (output.offsets[p + 1] > output.offsets[p]) {
        return p;
      }
    }
    throw new AssertionError(output.name + " has no data");
  }

  private static void collectKeys(VectorSchemaRoot batch, Set<Long> keys) {
    // Comet writes empty field names: match columns by position; k is the first.
    BigIntVector k = (BigIntVector) batch.getVector(0);
    for (int r = 0; r < batch.getRowCount(); r++) {
      assertTrue(keys.add(k.get(r)), "key " + k.get(r) + " appears twice");
    }
  }

  /** The {@code k} of every row of {@code dim}, as Spark's JSON writer wrote it (k first). */
  private static Set<Long> readDimKeys(Path json) throws IOException {
    Pattern key = Pattern.compile("^\\{\"k\":(-?\\d+)");
    Set<Long> keys = new HashSet<>();
    try (InputStream in = new GZIPInputStream(Files.newInputStream(json));
        BufferedReader lines =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = lines.readLine()) != null; ) {
        Matcher m = key.matcher(line);
        if (!m.find()) {
          throw new IOException("no leading k in " + line);
        }
        keys.add(Long.parseLong(m.group(1)));
      }
    }
    return keys;
  }
}
