package dev.quiver.tools;

import dev.quiver.shuffle.BlockCodec;
import dev.quiver.shuffle.ShuffleBlockDecoder;
import dev.quiver.shuffle.ShuffleBlockFormat;
import dev.quiver.shuffle.ShuffleCorruptionException;
import dev.quiver.shuffle.ShuffleIndex;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Dumps a shuffle data file, partition by partition as its Spark index splits it, block by block
 * through Quiver's {@link ShuffleBlockDecoder}; or, without an index, the whole file as one stream
 * of blocks.
 */
final class ShuffleFileDump {

  private final Path data;
  private final Path index;
  private final Integer onlyPartition;
  private final BufferAllocator allocator;
  private final Report report;

  private Schema firstSchema;
  private long totalBlocks;
  private long totalRows;

  /**
   * @param index Spark's index file for {@code data}, or null to read {@code data} as one stream
   * @param onlyPartition the one partition to dump, or null for all
   */
  ShuffleFileDump(
      Path data, Path index, Integer onlyPartition, BufferAllocator allocator, Report report) {
    this.data = data;
    this.index = index;
    this.onlyPartition = onlyPartition;
    this.allocator = allocator;
    this.report = report;
  }

  /** Whether {@code file} starts with what can be a block header: a length, fields, a tag. */
  static boolean startsWithBlockHeader(Path file) throws IOException {
    byte[] head = new byte[ShuffleBlockFormat.LENGTH_FIELD_BYTES + ShuffleBlockFormat.HEADER_BYTES];
    try (InputStream in = Files.newInputStream(file)) {
      if (in.readNBytes(head, 0, head.length) < head.length) {
        return false;
      }
    }
    int at = ShuffleBlockFormat.LENGTH_FIELD_BYTES + ShuffleBlockFormat.FIELD_COUNT_BYTES;
    return BlockCodec.isWrittenTag(Arrays.copyOfRange(head, at, at + ShuffleBlockFormat.TAG_BYTES));
  }

  /** Dumps the file; returns its total row count. */
  long run() throws IOException, QuiverDump.UsageException {
    long size = Files.size(data);
    long[] offsets;
    if (index == null) {
      offsets = new long[] {0, size};
      report.line("shuffle blocks %s: %d bytes, no index: one stream of blocks", data, size);
    } else {
      offsets = ShuffleIndex.read(index, size).offsets();
      int partitions = offsets.length - 1;
      report.line(
          "shuffle data %s: %d bytes, index %s: %d %s",
          data,
          size,
          index.getFileName(),
          partitions,
          partitions == 1 ? "partition" : "partitions");
    }
    int partitions = offsets.length - 1;
    if (onlyPartition != null && (onlyPartition < 0 || onlyPartition >= partitions)) {
      throw new QuiverDump.UsageException(
          "--partition " + onlyPartition + ": the file has partitions 0 to " + (partitions - 1));
    }
    try (FileChannel channel = FileChannel.open(data, StandardOpenOption.READ)) {
      for (int p = 0; p < partitions; p++) {
        if (onlyPartition == null || onlyPartition == p) {
          partition(channel, p, offsets[p], offsets[p + 1], index != null);
        }
      }
    }
    String blocks = totalBlocks + (totalBlocks == 1 ? " block" : " blocks");
    if (index == null) {
      report.line("total: %s, %d rows", blocks, totalRows);
    } else if (onlyPartition != null) {
      report.line("total: partition %d only: %s, %d rows", onlyPartition, blocks, totalRows);
    } else {
      report.line(
          "total: %d %s, %s, %d rows",
          partitions, partitions == 1 ? "partition" : "partitions", blocks, totalRows);
    }
    return totalRows;
  }

  private void partition(FileChannel channel, int p, long start, long end, boolean indexed)
      throws IOException {
    String name = indexed ? "partition " + p : "stream";
    String source =
        indexed
            ? data.getFileName() + " " + name + ", which starts at file offset " + start
            : data.getFileName().toString();
    FileSegmentInputStream in = new FileSegmentInputStream(channel, start, end);
    // Block lines are held until the partition is done, so that its line (with totals) comes first.
    List<String> blocks = new ArrayList<>();
    long rows = 0;
    try (ShuffleBlockDecoder decoder =
        new ShuffleBlockDecoder(
            in, allocator, null, ShuffleBlockFormat.DEFAULT_MAX_BLOCK_LENGTH, source)) {
      while (decoder.next()) {
        VectorSchemaRoot root = decoder.root();
        long blockStart = start + decoder.blockOffset();
        long blockBytes = in.consumed() - decoder.blockOffset();
        if (firstSchema == null) {
          firstSchema = root.getSchema();
          report.schema(firstSchema, "from the first block");
        } else if (!firstSchema.equals(root.getSchema())) {
          blocks.add("    its schema differs from the first block's:");
          for (String line : schemaLines(root.getSchema())) {
            blocks.add("    " + line);
          }
        }
        blocks.add(
            String.format(
                "  block %d: file offset %d, %d bytes (body %d), codec %s (%s), %d fields, %d rows",
                decoder.blockIndex(),
                blockStart,
                blockBytes,
                blockBytes
                    - ShuffleBlockFormat.LENGTH_FIELD_BYTES
                    - ShuffleBlockFormat.HEADER_BYTES,
                new String(decoder.codec().tag(), StandardCharsets.US_ASCII),
                decoder.codec().codecName(),
                root.getSchema().getFields().size(),
                root.getRowCount()));
        rows += root.getRowCount();
        totalBlocks++;
        report.rows(root.getFieldVectors(), root.getSchema().getFields(), root.getRowCount());
      }
    } catch (IOException e) {
      // What was read before the failure is still worth seeing.
      report.line(
          "%s: file offset %d, %d bytes: failed after %d %s",
          name, start, end - start, blocks.size(), blocks.size() == 1 ? "block" : "blocks");
      blocks.forEach(report::line);
      throw located(e, start);
    }
    totalRows += rows;
    report.line(
        "%s: file offset %d, %d bytes, %d %s, %d rows",
        name, start, end - start, blocks.size(), blocks.size() == 1 ? "block" : "blocks", rows);
    blocks.forEach(report::line);
  }

  /** The reader's error, with the file offset of the corrupt block added where it is known. */
  private static IOException located(IOException e, long partitionStart) {
    if (e instanceof ShuffleCorruptionException && partitionStart > 0) {
      ShuffleCorruptionException c = (ShuffleCorruptionException) e;
      if (c.blockOffset() >= 0) {
        // The message gives the offset in the partition's stream; add the one in the file.
        return new ShuffleCorruptionException(
            e.getMessage() + " [block at file offset " + (partitionStart + c.blockOffset()) + "]",
            c.blockIndex(),
            c.blockOffset(),
            e);
      }
    }
    return e;
  }

  private static List<String> schemaLines(Schema schema) {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < schema.getFields().size(); i++) {
      lines.add(String.format("  %2d %s", i, Report.describe(schema.getFields().get(i))));
    }
    return lines;
  }
}
