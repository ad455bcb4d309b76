package dev.quiver.broadcast;

import dev.quiver.io.Closeables;
import dev.quiver.ipc.ArrowIpc;
import dev.quiver.ipc.DecodedStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Turns a {@link BroadcastSource} into a {@link DecodedBroadcast}. The cache calls it with no lock
 * held; an implementation must leave nothing allocated in {@code allocator} when it throws.
 */
@FunctionalInterface
interface BroadcastDecoder {

  /** Decodes every stream of the broadcast with {@link ArrowIpc}, in order. */
  BroadcastDecoder ARROW_IPC =
      (source, allocator) -> {
        List<DecodedStream> streams = new ArrayList<>(source.streamCount());
        try {
          for (int i = 0; i < source.streamCount(); i++) {
            String what = "broadcast " + source.broadcastId() + ", stream " + i;
            try (InputStream in = source.openStream(i)) {
              streams.add(
                  ArrowIpc.decode(in, source.streamLength(i), source.codec(), allocator, what));
            }
          }
          return new DecodedBroadcast(streams);
        } catch (IOException | RuntimeException | Error e) {
          Closeables.closeAll(streams, e);
          throw e;
        }
      };

  DecodedBroadcast decode(BroadcastSource source, BufferAllocator allocator) throws IOException;
}
