/**
 * Arrow IPC streams, decoded strictly: {@link dev.quiver.ipc.ArrowIpc} decodes one codec-compressed
 * stream into a {@link dev.quiver.ipc.DecodedStream} (and encodes batches as one), refusing bytes
 * it cannot decode with an {@link dev.quiver.ipc.IpcFormatException}. Inside, the message framing
 * is read by Quiver itself ({@code IpcMessageReader}), so that every claimed length is checked
 * before anything is allocated for it, and each batch's structure is checked before and after Arrow
 * loads it ({@code IpcStreamReader}, {@code BatchChecks}). {@link dev.quiver.ipc.Coalescer} merges
 * a broadcast's small streams into one before it is sent. The codecs are in {@link
 * dev.quiver.codec}.
 *
 * <p>Ownership: a decode closes the compressed stream it is given and allocates its result's
 * buffers from the caller's allocator; the {@link dev.quiver.ipc.DecodedStream} holds one reference
 * on each, which its {@code close()} releases, and a failed decode leaves nothing allocated. An
 * encode closes the output stream it is given. {@link dev.quiver.ipc.ArrowIpc} keeps no state, so
 * decodes run on many threads at once, each over its own stream. A decoded stream does not change
 * after its decode: the broadcast cache shares one between tasks, each loading views of its
 * batches, and it is closed once, by its owner.
 */
package dev.quiver.ipc;
