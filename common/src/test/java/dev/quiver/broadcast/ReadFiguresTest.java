package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.awaitCondition;
import static dev.quiver.broadcast.CacheTestSupport.bytesOfOneDecode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.broadcast.BroadcastReader.Served;
import dev.quiver.broadcast.TestBroadcast.Shape;
import dev.quiver.codec.SparkStreamCodec;
import dev.quiver.testing.FakeTask;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What each reader tells of its task's open ({@link BroadcastReader#served()}, {@link
 * BroadcastReader#decodeNanos()}, {@link BroadcastReader#waitNanos()}), for every way an open is
 * served, and that the readers' figures add up to the cache's counters. Durations are only checked
 * to be zero or not: a decode that ran took some time, a wait that was blocked did.
 */
class ReadFiguresTest extends CacheTestBase {

  private TestBroadcast broadcast;

  @BeforeEach
  void encodeTheBroadcast() throws Exception {
    broadcast = encode(61, Shape.BUILD_SIDE, SparkStreamCodec.LZ4, new int[] {600, 400});
  }

  private static void assertDecoded(Served expected, BroadcastReader reader) {
    assertEquals(expected, reader.served());
    assertTrue(reader.decodeNanos() > 0, () -> expected + " read with no decode time");
  }

  /**
   * The readers of {@code decoding}, which decodes {@code broadcast}, and of {@code waiter}, which
   * opens it while that decode is held, in that order, once both opens are done.
   */
  private BroadcastReader[] decodeWithAWaiter(
      TestBroadcast broadcast, FakeTask decoding, FakeTask waiter) throws Exception {
    HeldDecode opens = openBehindAHeldDecode(broadcast, decoding, waiter);
    opens.release();
    return new BroadcastReader[] {done(opens.open(0)), done(opens.open(1))};
  }

  private static void assertNotDecoded(Served expected, BroadcastReader reader) {
    assertEquals(expected, reader.served());
    assertEquals(0, reader.decodeNanos(), () -> expected + " read with a decode time");
  }

  @Test
  void theDecodingTaskSeesItsDecodeAndTheWaiterItsWaitThenAReaderOfTheHeldEntryNeither()
      throws Exception {
    FakeTask decoding = new FakeTask();
    FakeTask waiter = new FakeTask();
    FakeTask later = new FakeTask();
    BroadcastReader[] readers = decodeWithAWaiter(broadcast, decoding, waiter);
    BroadcastReader decoded = readers[0];
    BroadcastReader waited = readers[1];
    BroadcastReader shared = cache.open(broadcast, later, true);

    assertDecoded(Served.DECODED, decoded);
    assertEquals(0, decoded.waitNanos(), "the decoding task waited for nobody");
    assertNotDecoded(Served.SHARED, waited);
    assertTrue(waited.waitNanos() > 0, "the waiter was blocked on the decode");
    assertNotDecoded(Served.SHARED, shared);
    assertEquals(0, shared.waitNanos(), "the entry was decoded when the third task came");
    assertEquals(1, cache.counters().decodes());
    assertEquals(2, cache.counters().sharedReads());
    assertEquals(
        cache.counters().waitNanos(),
        decoded.waitNanos() + waited.waitNanos() + shared.waitNanos(),
        "the readers' waits are the cache's");
    for (BroadcastReader reader : new BroadcastReader[] {decoded, waited, shared}) {
      assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(reader, broadcast, null));
    }
    complete(decoding, waiter, later);
  }

  @Test
  void withSharingOffEveryTaskDecodesPrivately() throws Exception {
    List<FakeTask> tasks = newTasks(2);
    List<BroadcastReader> readers = new ArrayList<>();
    for (FakeTask task : tasks) {
      readers.add(cache.open(broadcast, task, false));
    }
    for (BroadcastReader reader : readers) {
      assertDecoded(Served.PRIVATE, reader);
      assertEquals(0, reader.waitNanos());
      assertEquals(2, Consumer.KEEPS_VIEWS_OPEN.consume(reader, broadcast, null));
    }
    assertEquals(2, cache.counters().privateDecodes());
    tasks.forEach(FakeTask::complete);
  }

  @Test
  void aReadOfARetainedEntryDecodesNothingAndWaitsForNothing() throws Exception {
    BoundedStorageMemory memory =
        new BoundedStorageMemory(100 * bytesOfOneDecode(broadcast, allocator));
    cache = caches.with(Retention.of(Long.MAX_VALUE, memory, id -> true));
    FakeTask first = new FakeTask();
    assertDecoded(Served.DECODED, cache.open(broadcast, first, true));
    first.complete();
    FakeTask second = new FakeTask();
    BroadcastReader retained = cache.open(broadcast, second, true);
    assertNotDecoded(Served.RETAINED, retained);
    assertEquals(0, retained.waitNanos());
    assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(retained, broadcast, null));
    assertEquals(1, cache.counters().retainedReads());
    second.complete();
    cache.close();
    assertEquals(0, memory.used());
  }

  @Test
  void aWaiterWhoseSharedDecodeFailedDecodesPrivatelyAndKeepsItsWait() throws Exception {
    decoder.failCall(1);
    FakeTask failing = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(broadcast, failing, waiter);
    opens.release();
    ExecutionException failed = assertThrows(ExecutionException.class, () -> done(opens.open(0)));
    assertTrue(failed.getCause() instanceof ScriptedDecoder.InjectedFailure, failed::toString);
    BroadcastReader reader = done(opens.open(1));

    assertDecoded(Served.PRIVATE, reader);
    assertTrue(reader.waitNanos() > 0, "the wait before the private decode is lost");
    assertEquals(cache.counters().waitNanos(), reader.waitNanos());
    assertEquals(2, Consumer.CLOSES_EACH_VIEW.consume(reader, broadcast, null));
    complete(failing, waiter);
  }

  @Test
  void aFormThatCannotBeSharedIsDecodedByItsFirstTaskAndPrivatelyByItsWaiter() throws Exception {
    cache = caches.with(decoder.unshareable(), Long.MAX_VALUE);
    FakeTask first = new FakeTask();
    FakeTask waiter = new FakeTask();
    BroadcastReader[] readers = decodeWithAWaiter(broadcast, first, waiter);
    BroadcastReader decoded = readers[0];
    BroadcastReader privately = readers[1];

    // As the counters have it: the first decode was meant to be shared.
    assertDecoded(Served.DECODED, decoded);
    assertEquals(1, cache.counters().decodes());
    assertDecoded(Served.PRIVATE, privately);
    assertTrue(privately.waitNanos() > 0);
    assertEquals(1, cache.counters().privateDecodes());
    complete(first, waiter);
  }

  @Test
  void aWaitForADerivedValueCountsInTheWaitingReader() throws Exception {
    KeyTableDerivation derivation = new KeyTableDerivation(broadcast, 1000);
    FakeTask builder = new FakeTask();
    FakeTask waiter = new FakeTask();
    BroadcastReader building = cache.open(broadcast, builder, true);
    BroadcastReader waiting = cache.open(broadcast, waiter, true);
    assertEquals(0, waiting.waitNanos(), "the decode was done when the second task came");
    Gate gate = derivation.blockBuild(1);
    Future<Served> built =
        executor.submit(
            () ->
                building.derived(
                    "keys",
                    (reader, valueAllocator) -> {
                      // The build's reader tells what the asking task's open cost.
                      Served served = reader.served();
                      derivation.build(reader, valueAllocator).close();
                      return DerivedValue.of(served, 0, () -> {});
                    }));
    gate.awaitEntered();
    Future<Served> reused = executor.submit(() -> waiting.derived("keys", (r, a) -> null));
    awaitCondition("the second task waits", () -> cache.counters().waits() == 1);
    gate.release();
    assertEquals(Served.DECODED, built.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
    assertEquals(Served.DECODED, reused.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));

    assertEquals(0, building.waitNanos(), "the builder waited for nobody");
    assertTrue(waiting.waitNanos() > 0, "the wait for the derived value is not the reader's");
    assertEquals(cache.counters().waitNanos(), waiting.waitNanos());
    assertEquals(
        Served.SHARED,
        waiting.served(),
        "a wait for a derived value changed how the open is served");
    complete(builder, waiter);
    derivation.releaseAll();
  }
}
