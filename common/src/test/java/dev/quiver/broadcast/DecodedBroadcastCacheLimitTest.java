package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.StreamCodec;
import dev.quiver.ipc.IpcFormatException;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-entry limit ({@code maxEntryBytes}) bounds a decode, not the tasks reading it. */
class DecodedBroadcastCacheLimitTest extends CacheTestBase {

  private static final int TASKS = 8;

  @Test
  void decodeOverTheLimitFailsAndLeavesNothing() throws Exception {
    TestBroadcast broadcast = encode(61, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {5000});
    long oneDecode = bytesOfOneDecode(broadcast, allocator);
    DecodedBroadcastCache cache = caches.with(BroadcastDecoder.arrowIpc(), oneDecode / 2);
    FakeTask task = new FakeTask();
    assertThrows(IpcFormatException.class, () -> cache.open(broadcast, task, true));
    assertEquals(1, cache.counters().failedDecodes());
    assertTrue(cache.snapshot().isEmpty(), () -> cache.snapshot().toString());
    task.complete();
  }

  /**
   * A broadcast that fits the limit can be read by any number of tasks sharing it, as it can with
   * sharing off: the tasks' views must not count against the one decode's limit.
   */
  @Test
  void broadcastThatFitsTheLimitIsReadableByManySharingTasks() throws Exception {
    TestBroadcast broadcast =
        encode(62, Shape.BUILD_SIDE, StreamCodec.NONE, new int[] {1000, 1000});
    long limit = bytesOfOneDecode(broadcast, allocator) + 1024;
    DecodedBroadcastCache cache = caches.with(BroadcastDecoder.arrowIpc(), limit);

    for (boolean share : new boolean[] {false, true}) {
      List<FakeTask> tasks = new ArrayList<>();
      for (int i = 0; i < TASKS; i++) {
        FakeTask task = new FakeTask();
        tasks.add(task);
        BroadcastReader reader = cache.open(broadcast, task, share);
        assertEquals(
            2, Consumer.KEEPS_VIEWS_OPEN.consume(reader, broadcast, null), "share=" + share);
      }
      for (FakeTask task : tasks) {
        task.complete();
      }
      assertTrue(cache.snapshot().isEmpty(), () -> cache.snapshot().toString());
    }
  }
}
