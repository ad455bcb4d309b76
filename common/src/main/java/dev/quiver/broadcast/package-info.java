/**
 * The executor-wide cache of decoded broadcasts. {@link dev.quiver.broadcast.DecodedBroadcastCache}
 * decodes each broadcast (a {@link dev.quiver.broadcast.BroadcastSource}: compressed streams and
 * their codec) once while its tasks overlap, with a {@link dev.quiver.broadcast.BroadcastDecoder}
 * (Arrow IPC by default), and lets them share the decoded form, and may keep it past its last task
 * ({@link dev.quiver.broadcast.Retention}, accounted in a {@link
 * dev.quiver.broadcast.StorageMemory}). Each task reads through a {@link
 * dev.quiver.broadcast.BroadcastReader} of its own, and may ask for values built once per entry
 * from the decoded broadcast ({@link dev.quiver.broadcast.Derivation}, {@link
 * dev.quiver.broadcast.DerivedValue}). {@link dev.quiver.broadcast.CacheSnapshot} and {@link
 * dev.quiver.broadcast.CacheCounters} tell what it holds and what it did.
 *
 * <p>Ownership: the cache decodes each entry into a child of the allocator it is given (which it
 * never closes) and owns the entry's buffers and derived values. It frees them when the last task
 * holding the entry ends and the entry is not retained, or when a retained entry is evicted; never
 * while a task holds it. A task's hold ends with the task (through its {@link
 * dev.quiver.task.TaskScope}), not with its reader. A reader's views are the task's own, holding
 * references on the shared buffers, so a consumer may close them; the shared batches it must
 * neither close nor write. The streams the cache opens from a source it closes.
 *
 * <p>Threads: one cache serves all of an executor's tasks. Its state changes in short sections
 * under the cache's monitor, each entry's and each entry's derived values', taken in that order;
 * decoding, building derived values and waiting happen outside them all. A reader is for one task
 * on one thread. The retention's liveness check and storage memory are called under the cache's
 * monitor and must not call back into the cache; a storage memory must be thread-safe.
 */
package dev.quiver.broadcast;
