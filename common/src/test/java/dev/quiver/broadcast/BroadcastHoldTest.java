package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.FakeTask;
import dev.quiver.testing.LogCapture;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * Holds that outlive their task ({@link BroadcastReader#hold(String)}): the entry, its buffers and
 * its storage memory stay until the last one is closed, whatever happened meanwhile.
 */
class BroadcastHoldTest extends RetentionTestBase {

  /** A task that opens broadcast 1 and stays on its first batch, holding it for a consumer. */
  private final class HoldingTask implements HeldForAConsumer {
    final FakeTask task = new FakeTask();
    final BroadcastReader reader;
    final ArrowRecordBatch batch;
    final BroadcastHold hold;

    HoldingTask(String holder) throws Exception {
      reader = cache.open(first, task, true);
      assertTrue(reader.next());
      batch = reader.currentBatch();
      hold = reader.hold(holder);
    }

    @Override
    public void assertReadable() {
      assertLive(batch);
    }

    @Override
    public void release() {
      hold.close();
    }
  }

  /** A retaining cache, and a task that held broadcast 1 for {@code holder} and has ended. */
  private HoldingTask heldPastItsTask(String holder) throws Exception {
    retainingCache(10 * size, 100 * size);
    HoldingTask held = new HoldingTask(holder);
    held.task.complete();
    return held;
  }

  /** The batch's buffers are still allocated: none has been freed under the hold. */
  private static void assertLive(ArrowRecordBatch batch) {
    for (ArrowBuf buffer : batch.getBuffers()) {
      assertTrue(buffer.refCnt() > 0, "a buffer of a held batch was freed");
    }
  }

  @Test
  void aHoldKeepsTheEntryPastItsTaskAndItsStorageMemoryUntilReleased() throws Exception {
    retainingCache(10 * size, 100 * size);
    HoldingTask held = new HoldingTask("consumer 1");
    assertEquals(2, holders(1), "the task and its hold");

    assertEquals(0, memory.used(), "while a task holds it, its bytes are the task's");
    held.task.complete();
    assertEquals(1, holders(1), "the hold outlives the task");
    assertFalse(entry(1).retained(), "a held entry is not retained");
    assertEquals(size, memory.used(), "held by a consumer alone, it is in storage memory");
    assertLive(held.batch);
    assertEquals(List.of(held.hold), cache.outstandingHolds());

    FakeTask again = new FakeTask();
    cache.open(first, again, true);
    assertEquals(0, memory.used(), "a task holds it again: its bytes are the task's");
    again.complete();
    assertEquals(size, memory.used(), "its task gone, the consumer's hold is accounted again");

    held.hold.close();
    assertTrue(held.hold.isReleased());
    assertTrue(entry(1).retained(), "idle after its last hold, the entry is retained");
    assertEquals(size, memory.used());
    assertTrue(cache.outstandingHolds().isEmpty());
    closeAndAssertAllFreed();
  }

  @Test
  void aDroppedEntryGoesAtItsLastReleaseNotBefore() throws Exception {
    assertADroppedEntryGoesAtTheRelease(heldPastItsTask("consumer"));
  }

  @Test
  void pressureNeverEvictsAHeldEntryAndItsBytesGoAtTheLastRelease() throws Exception {
    HoldingTask held = heldPastItsTask("consumer");
    assertEquals(size, memory.used(), "held by a consumer alone, it is in storage memory");
    long sparkBlocks = sparkBlocksLeaving(size / 2);
    cache.checkRetained();
    assertEquals(1, holders(1), "pressure evicts idle entries only");
    assertLive(held.batch);

    held.hold.close();
    assertNull(entry(1), "under pressure, it goes once its last release made it idle");
    releaseSparkBlocksAndAssertAllFreed(sparkBlocks);
  }

  @Test
  void aSecondReleaseIsReportedAndEndsNoOtherHold() throws Exception {
    HoldingTask held = new HoldingTask("consumer");
    BroadcastHold other = held.reader.hold("another consumer");
    held.task.complete();
    try (LogCapture log = LogCapture.of(DecodedBroadcastCache.class)) {
      held.hold.close();
      held.hold.close();
      assertEquals(1, cache.counters().doubleReleases());
      assertEquals(1, holders(1), "the second release ended nothing");
      assertLive(held.batch);
      List<String> warnings = log.at(Level.WARN);
      assertEquals(1, warnings.size(), warnings::toString);
      assertTrue(warnings.get(0).contains("second release"), warnings.get(0));
      assertTrue(warnings.get(0).contains("broadcast 1 by consumer"), warnings.get(0));
    }
    other.close();
    assertNull(entry(1));
  }

  @Test
  void holdsReleasedOnOtherThreadsInAnyOrderFreeTheEntryOnce() throws Exception {
    assertReleasesOnOtherThreadsFreeTheEntryOnce(8, BroadcastReader::hold);
  }

  @Test
  void holdsStillOpenAtCloseAreLoggedAsLeaksAndMayBeReleasedAfter() throws Exception {
    HoldingTask held = heldPastItsTask("native consumer 7");
    assertALeakAtCloseGoesAtTheRelease(held, "native consumer 7", held.task);
  }

  @Test
  void aClosedReaderOrADerivationsReaderCannotHold() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, task, true);
    IllegalStateException fromBuild =
        assertThrows(
            IllegalStateException.class,
            () ->
                reader.derived(
                    "key",
                    (building, allocator) -> {
                      building.hold("the build");
                      return DerivedValue.of("never", 0, () -> {});
                    }));
    assertTrue(fromBuild.getMessage().contains("cannot hold"), fromBuild.getMessage());
    reader.close();
    assertThrows(IllegalStateException.class, () -> reader.hold("late"));
    task.complete();
    assertTrue(cache.outstandingHolds().isEmpty());
  }
}
