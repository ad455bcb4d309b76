package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.examples.NativeConsumerExample;
import dev.quiver.testing.FakeTask;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/** docs/engines.md's native-consumer example, run: what it says happens does. */
class NativeConsumerExampleTest extends RetentionTestBase {

  @Test
  void theConsumerReadsEveryRowAfterTheTaskAndItsReleaseLetsTheEntryGo() throws Exception {
    retainingCache(10 * size, 100 * size);
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    try (BufferAllocator consumer = new RootAllocator()) {
      long rows =
          NativeConsumerExample.run(
              reader,
              task.attemptId(),
              consumer,
              executor,
              () -> {
                task.complete();
                // Past its task, the export alone holds the entry: not retained, not freed, and
                // accounted in storage memory.
                CacheSnapshot.EntryState held = entry(1);
                assertEquals(1, held.holders(), held::toString);
                assertEquals(size, memory.used());
              });
      assertEquals(700, rows, "every row of both batches");
      assertEquals(0, consumer.getAllocatedMemory(), "the consumer released what it imported");
    }
    assertTrue(cache.outstandingHolds().isEmpty());
    assertTrue(entry(1).retained(), "idle after the consumer's release, the entry is retained");
    live.remove(1L);
    cache.checkRetained();
    assertNull(entry(1));
    closeAndAssertAllFreed();
  }
}
