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
 * in a reused direct buffer; {@link dev.quiver.shuffle.ShuffleBlockWriter} writes blocks; {@link
 * dev.quiver.shuffle.BlockCodec} names each body's codec by its tag. Readers never call {@code
 * available()} and check every length before allocating for it. Around the blocks: {@link
 * dev.quiver.shuffle.ShuffleIndex} reads Spark's index file of a map output, and {@link
 * dev.quiver.shuffle.ExactLengthInputStream} holds a segment of its data file to its length.
 *
 * <p>Ownership: a decoder or an iterator owns the stream it reads and closes it. The decoder
 * allocates each batch from the caller's allocator and owns it until the next block or its close (a
 * consumer that keeps a batch transfers its vectors out); the iterator's body is its own direct
 * buffer, reused, valid until the next block. The writer leaves its stream open: the caller owns
 * it. Given a task, a reader stops when the task is killed and is closed when the task ends.
 * Readers and writers are for one thread, except that a reader's {@code close()} may come from
 * another thread to stop a stalled read.
 */
package dev.quiver.shuffle;
