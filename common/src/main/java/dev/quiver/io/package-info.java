/**
 * Reading and writing streams in pieces of up to 64 KiB, never through {@code
 * InputStream.available()}: {@link dev.quiver.io.PiecewiseReads} fills a buffer or an array from a
 * stream, and {@link dev.quiver.io.PiecewiseInputChannel} and {@link
 * dev.quiver.io.PiecewiseOutputChannel} are the channels Arrow's IPC reader and writer get instead
 * of the JDK's. Beside them, what those reads share with the decoders above them: {@link
 * dev.quiver.io.BufferReadable}, a stream that writes into a direct buffer itself; {@link
 * dev.quiver.io.ArrayInputStream}, bytes held in memory that a decompressor may read in place; and
 * {@link dev.quiver.io.CorruptInputException}, the base of every refusal of bad bytes by Quiver
 * ({@link dev.quiver.io.CorruptBlockException} for the formats framed in blocks).
 *
 * <p>Ownership: a channel owns the stream it is made over and closes it when it is closed; {@link
 * dev.quiver.io.PiecewiseReads} neither closes the stream nor keeps the buffer it fills. Nothing
 * here allocates Arrow memory; the only array of its own it keeps is one staging piece per thread,
 * for destinations without a backing array. A channel or stream is used by one thread at a time (a
 * channel's read on an interrupted thread closes it, as the JDK's channel does).
 */
package dev.quiver.io;
