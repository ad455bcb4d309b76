/**
 * Command-line tools over Quiver's readers, without Spark, kept out of every artifact (module
 * {@code dev/tools}). {@link dev.quiver.tools.QuiverDump} (run as {@code dev/dump}) dumps a Comet
 * or Quiver shuffle file or a broadcast value: partitions, blocks, codec, schema, row counts, and
 * the rows as JSON lines.
 */
package dev.quiver.tools;
