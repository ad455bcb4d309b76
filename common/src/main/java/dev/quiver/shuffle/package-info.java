/**
 * Shuffle blocks in the format Apache DataFusion Comet's native shuffle writes, so Quiver reads and
 * writes blocks a real engine produces.
 *
 * <pre>
 * u64 little-endian  length of everything after this field (field count + codec tag + body)
 * u64 little-endian  number of top-level fields in the schema
 * 4 bytes            codec tag: "LZ4_", "ZSTD", "SNAP" or "NONE"
 * ...                the codec's compressed form of one Arrow IPC stream: schema, one batch, end
 * </pre>
 *
 * <p>{@link dev.quiver.shuffle.ShuffleBlockDecoder} decodes blocks into Arrow batches (the JVM
 * path); {@link dev.quiver.shuffle.RawBlockIterator} hands each compressed body to a native engine
 * in a reused direct buffer; {@link dev.quiver.shuffle.ShuffleBlockWriter} writes blocks. Readers
 * never call {@code available()} and check every length before allocating for it.
 */
package dev.quiver.shuffle;
