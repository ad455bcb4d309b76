/**
 * Command-line tools over Quiver's readers, without Spark. {@link dev.quiver.tools.QuiverDump} (run
 * as {@code dev/dump}) dumps a Comet or Quiver shuffle file or a broadcast value: partitions,
 * blocks, codec, schema, row counts, and the rows as JSON lines. {@link
 * dev.quiver.ipc.SparkStreamCodec} reads and writes Spark's {@code spark.io.compression.codec}
 * framings without Spark.
 */
package dev.quiver.tools;
