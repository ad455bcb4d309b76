package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.FakeTask;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.Test;

/**
 * Decoders other than Arrow IPC ({@link BroadcastDecoder}): the cache shares, retains, accounts and
 * frees their forms, and values derived from them, by the same rules, with each form's bytes
 * accounted where they live.
 */
class PluggableDecoderTest extends RetentionTestBase {

  /**
   * Memory outside Arrow's allocators, as an engine's native code holds it: direct buffers, each
   * freed by its release, with what is outstanding and how often each was released.
   */
  static final class NativeArena {
    final AtomicLong outstanding = new AtomicLong();
    final AtomicInteger releases = new AtomicInteger();
    final AtomicInteger doubleReleases = new AtomicInteger();

    final class Block implements AutoCloseable {
      final ByteBuffer memory;
      private boolean released;

      Block(int bytes) {
        memory = ByteBuffer.allocateDirect(bytes);
        outstanding.addAndGet(bytes);
      }

      @Override
      public synchronized void close() {
        if (released) {
          doubleReleases.incrementAndGet();
          return;
        }
        released = true;
        releases.incrementAndGet();
        outstanding.addAndGet(-memory.capacity());
      }
    }

    Block copyOf(byte[] bytes) {
      Block block = new Block(bytes.length);
      block.memory.put(bytes).flip();
      return block;
    }
  }

  /** A form that keeps the decompressed streams in native memory. */
  static final class NativeRows implements DecodedForm {
    final NativeArena.Block block;

    NativeRows(NativeArena.Block block) {
      this.block = block;
    }

    @Override
    public long nativeBytes() {
      return block.memory.capacity();
    }

    @Override
    public void close() {
      block.close();
    }
  }

  /** A storage memory that tells what each location holds, in one bounded pool. */
  static final class ByLocation implements StorageMemory {
    final BoundedStorageMemory pool;
    final Map<MemoryLocation, AtomicLong> used = new EnumMap<>(MemoryLocation.class);

    ByLocation(long capacity) {
      pool = new BoundedStorageMemory(capacity);
      for (MemoryLocation location : MemoryLocation.values()) {
        used.put(location, new AtomicLong());
      }
    }

    @Override
    public boolean tryAcquire(long broadcastId, long bytes, MemoryLocation location) {
      boolean taken = pool.tryAcquire(broadcastId, bytes, location);
      if (taken) {
        used.get(location).addAndGet(bytes);
      }
      return taken;
    }

    @Override
    public void release(long broadcastId, long bytes, MemoryLocation location) {
      pool.release(broadcastId, bytes, location);
      used.get(location).addAndGet(-bytes);
    }

    @Override
    public boolean underPressure() {
      return pool.underPressure();
    }

    long in(MemoryLocation location) {
      return used.get(location).get();
    }
  }

  private final NativeArena arena = new NativeArena();
  private final AtomicInteger nativeDecodes = new AtomicInteger();

  /** Decodes every stream's decompressed bytes into one native block. */
  private final BroadcastDecoder<NativeRows> nativeDecoder =
      new BroadcastDecoder<NativeRows>() {
        @Override
        public NativeRows decode(BroadcastSource source, BufferAllocator allocator)
            throws IOException {
          nativeDecodes.incrementAndGet();
          return new NativeRows(arena.copyOf(decompressedStreams(source)));
        }

        @Override
        public String name() {
          return "native-rows";
        }
      };

  private static byte[] decompressedStreams(BroadcastSource source) throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < source.streamCount(); i++) {
      try (InputStream in = source.codec().decompress(source.openStream(i))) {
        in.transferTo(all);
      }
    }
    return all.toByteArray();
  }

  private ByLocation byLocation;

  private void cacheByLocation(long capacity) {
    byLocation = new ByLocation(capacity);
    cache = caches.with(Retention.of(capacity, byLocation, live::contains));
  }

  /** The entry of broadcast 1 is gone, its native memory released exactly once. */
  private void assertNativeFreedOnce() {
    assertNull(entry(1));
    assertEquals(1, arena.releases.get(), "the native release ran exactly once, as its entry went");
    assertEquals(0, arena.doubleReleases.get());
    assertEquals(0, arena.outstanding.get());
    assertEquals(0, byLocation.pool.used());
  }

  private FakeTask openWith(BroadcastDecoder<?> decoder) throws IOException {
    FakeTask task = new FakeTask();
    cache.open(first, decoder, task, true);
    return task;
  }

  @Test
  void aNativeFormIsSharedRetainedInTheNativeLocationAndReleasedOnce() throws Exception {
    cacheByLocation(100 * size);
    FakeTask one = new FakeTask();
    FakeTask two = new FakeTask();
    NativeRows first1 = cache.open(first, nativeDecoder, one, true).decoded(NativeRows.class);
    NativeRows first2 = cache.open(first, nativeDecoder, two, true).decoded(NativeRows.class);
    assertSame(first1, first2, "one decode for both tasks");
    assertEquals(1, nativeDecodes.get());
    long nativeBytes = first1.nativeBytes();
    assertTrue(nativeBytes > 0);
    CacheSnapshot.EntryState held = entry(1);
    assertEquals("native-rows", held.decoder());
    assertEquals(nativeBytes, held.bytes(), "a native form's bytes are its entry's");
    assertEquals(nativeBytes, cache.counters().bytesHeld());

    one.complete();
    two.complete();
    assertTrue(entry(1).retained());
    assertEquals(nativeBytes, byLocation.in(MemoryLocation.NATIVE));
    assertEquals(0, byLocation.in(MemoryLocation.ARROW));
    assertEquals(0, byLocation.in(MemoryLocation.JVM_HEAP));
    assertEquals(nativeBytes, cache.counters().bytesRetained());
    assertEquals(0, arena.releases.get(), "never released while retained");

    openWith(nativeDecoder).complete();
    assertEquals(1, nativeDecodes.get(), "read retained, not decoded again");

    live.remove(1L);
    cache.checkRetained();
    assertNativeFreedOnce();
    assertEquals(0, cache.counters().bytesHeld());
  }

  @Test
  void aNativeTableDerivedFromTheKeptSourceIsBuiltOnceAccountedAndReleasedOnce() throws Exception {
    cacheByLocation(100 * size);
    AtomicInteger builds = new AtomicInteger();
    Derivation<NativeArena.Block> nativeTable =
        (reader, allocator) -> {
          builds.incrementAndGet();
          KeptSource kept = reader.decoded(KeptSource.class);
          ByteArrayOutputStream all = new ByteArrayOutputStream();
          for (int i = 0; i < kept.streamCount(); i++) {
            try (InputStream in = kept.openDecompressed(i)) {
              in.transferTo(all);
            }
          }
          NativeArena.Block table = arena.copyOf(all.toByteArray());
          return DerivedValue.ofNative(table, table.memory.capacity(), table);
        };
    FakeTask one = new FakeTask();
    FakeTask two = new FakeTask();
    BroadcastReader reader1 = cache.open(first, BroadcastDecoder.keepSource(), one, true);
    BroadcastReader reader2 = cache.open(first, BroadcastDecoder.keepSource(), two, true);
    NativeArena.Block table = reader1.derived("table", nativeTable);
    assertSame(table, reader2.derived("table", nativeTable));
    assertEquals(1, builds.get());
    assertEquals(0, allocator.getAllocatedMemory(), "kept streams allocate nothing of Arrow");
    long tableBytes = table.memory.capacity();
    assertEquals(tableBytes, entry(1).bytes());
    assertEquals(tableBytes, cache.counters().bytesHeld());

    one.complete();
    two.complete();
    assertEquals(tableBytes, byLocation.in(MemoryLocation.NATIVE));
    assertEquals(0, arena.releases.get());

    cache.close();
    assertNativeFreedOnce();
  }

  @Test
  void oneBroadcastTwoDecodersMakesTwoEntriesAndADropTakesBoth() throws Exception {
    cacheByLocation(100 * size);
    openWith(BroadcastDecoder.arrowIpc()).complete();
    openWith(nativeDecoder).complete();
    Set<String> decoders = new TreeSet<>();
    for (CacheSnapshot.EntryState e : cache.snapshot().entries()) {
      assertEquals(1, e.broadcastId());
      decoders.add(e.decoder());
    }
    assertEquals(Set.of("arrow-ipc", "native-rows"), decoders);
    assertEquals(1, nativeDecodes.get());
    assertTrue(byLocation.in(MemoryLocation.ARROW) > 0);
    assertTrue(byLocation.in(MemoryLocation.NATIVE) > 0);

    cache.drop(1);
    assertTrue(cache.snapshot().entries().isEmpty());
    assertEquals(0, byLocation.pool.used());
    assertEquals(1, arena.releases.get());
  }

  @Test
  void aFormThatCannotBeSharedStaysWithItsDecoderAndItsWaiterDecodesForItself() throws Exception {
    cache = caches.with(decoder.unshareable(), Long.MAX_VALUE);
    FakeTask decoding = new FakeTask();
    FakeTask waiter = new FakeTask();
    HeldDecode opens = openBehindAHeldDecode(first, decoding, waiter);
    opens.release();
    BroadcastReader decoded = done(opens.open(0));
    assertTrue(cache.snapshot().entries().isEmpty(), "an unshareable form is listed");
    BroadcastReader alone = done(opens.open(1));

    assertEquals(BroadcastReader.Served.DECODED, decoded.served());
    assertEquals(BroadcastReader.Served.PRIVATE, alone.served());
    assertEquals(2, decoder.calls(), "the unshareable form was shared");
    assertEquals(1, cache.counters().decodes());
    assertEquals(1, cache.counters().privateDecodes());
    assertEquals(0, cache.counters().sharedReads());
    assertNotSame(decoded.decoded(DecodedForm.class), alone.decoded(DecodedForm.class));
    complete(decoding, waiter);
  }

  @Test
  void aReaderOfAnotherFormRefusesArrowReadsByName() throws Exception {
    FakeTask task = new FakeTask();
    BroadcastReader reader = cache.open(first, BroadcastDecoder.keepSource(), task, true);
    assertEquals(-1, reader.rowCount());
    IllegalStateException next = assertThrows(IllegalStateException.class, reader::next);
    assertTrue(next.getMessage().contains("KeptSource"), next.getMessage());
    assertTrue(next.getMessage().contains("no Arrow batches"), next.getMessage());
    assertThrows(IllegalStateException.class, () -> reader.decoded(NativeRows.class));
    assertEquals(1, reader.decoded(KeptSource.class).broadcastId());
    task.complete();
  }

  @Test
  void aDecoderThatReturnsNothingFailsTheOpenAndLeavesNothing() throws Exception {
    BroadcastDecoder<NativeRows> empty = (source, into) -> null;
    FakeTask task = new FakeTask();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> cache.open(first, empty, task, true));
    assertTrue(e.getMessage().contains("returned nothing for broadcast 1"), e.getMessage());
    assertEquals(1, cache.counters().failedDecodes());
    assertNull(entry(1));
    task.complete();
    assertFalse(cache.snapshot().entries().iterator().hasNext());
  }
}
