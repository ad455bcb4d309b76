/**
 * Compression codecs as stream wrappers ({@link dev.quiver.codec.StreamCodec}), and Spark's {@code
 * spark.io.compression.codec} codecs as Spark frames them ({@link
 * dev.quiver.codec.SparkStreamCodec}), decompressed by Quiver's own readers for untrusted bytes:
 * {@code SparkLz4InputStream} for Spark's lz4 framing and {@link dev.quiver.codec.SnappyStreams}
 * for snappy-java's stream format and the Snappy framing format, with lz4 through {@link
 * dev.quiver.codec.SafeLz4}'s safe decompressor only. They check every length before allocating for
 * it and refuse bad bytes with {@link dev.quiver.codec.Lz4FramingException} or {@link
 * dev.quiver.codec.SnappyFormatException}, naming the block or chunk and its offset. The shuffle
 * block codecs build on the same readers ({@code dev.quiver.shuffle.BlockCodec}).
 *
 * <p>Ownership: the stream {@code decompress(in)} returns owns {@code in} and closes it when it is
 * closed; the one {@code compress(out)} returns finishes the compressed stream and closes {@code
 * out}. Quiver's readers allocate only heap arrays, bounded by the bytes that have arrived (within
 * a small factor), never Arrow memory, and keep no buffer a caller reads into; the lz4 reader reads
 * an {@link dev.quiver.io.ArrayInputStream}'s array in place without writing to it. The codecs here
 * are immutable and shared by every thread; each stream they return is for one thread at a time.
 */
package dev.quiver.codec;
