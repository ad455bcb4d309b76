package dev.quiver.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.quiver.testing.ActingInputStream;
import dev.quiver.testing.AllocatorExtension;
import dev.quiver.testing.CountingInputStream;
import dev.quiver.testing.FakeTask;
import dev.quiver.testing.TestData;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The readers within a task: a killed task finishes the read in progress and stops at the next
 * block; the task's completion closes the stream and the current batch, even mid-read.
 */
@ExtendWith(AllocatorExtension.class)
class TaskLifecycleTest {

  /** Three blocks of 10, 20 and 30 rows. */
  private static byte[] threeBlocks(BufferAllocator allocator) throws IOException {
    try (VectorSchemaRoot a = TestData.buildSide(allocator, 0, 10);
        VectorSchemaRoot b = TestData.buildSide(allocator, 10, 20);
        VectorSchemaRoot c = TestData.buildSide(allocator, 30, 30)) {
      return Blocks.write(BlockCodec.LZ4, a, b, c);
    }
  }

  /** {@link #threeBlocks} as a stream that counts the calls made on it and sees its close. */
  private static CountingInputStream threeBlocksCounted(BufferAllocator allocator)
      throws IOException {
    return new CountingInputStream(new ByteArrayInputStream(threeBlocks(allocator)));
  }

  @Test
  void killedTaskStopsTheDecoderAtTheNextBlock(BufferAllocator allocator) throws IOException {
    FakeTask task = new FakeTask();
    CountingInputStream in = threeBlocksCounted(allocator);
    ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator, task);
    assertEquals(1, task.pendingListeners(), "registers to be closed at completion");
    assertTrue(decoder.next());
    long readsBefore = in.counts().reads();
    task.kill("speculative copy won");
    FakeTask.KilledException e = assertThrows(FakeTask.KilledException.class, decoder::next);
    assertEquals("speculative copy won", e.getMessage());
    assertEquals(readsBefore, in.counts().reads(), "nothing more is read once killed");
    assertThrows(FakeTask.KilledException.class, decoder::next, "and it stays killed");
    assertFalse(in.isClosed(), "the stream stays open until the task completes");

    task.complete();
    assertTrue(in.isClosed());
  }

  @Test
  void killedTaskStopsTheRawIteratorAtTheNextBlock(BufferAllocator allocator) throws IOException {
    FakeTask task = new FakeTask();
    CountingInputStream in = threeBlocksCounted(allocator);
    RawBlockIterator raw = new RawBlockIterator(in, task);
    assertTrue(raw.next());
    task.kill("stage cancelled");
    assertThrows(FakeTask.KilledException.class, raw::next);
    task.complete();
    assertTrue(in.isClosed());
    assertThrows(IOException.class, raw::next, "a closed iterator reads no more");
  }

  @Test
  void killDuringAReadLetsThatReadFinish(BufferAllocator allocator) throws IOException {
    FakeTask task = new FakeTask();
    byte[] stream = threeBlocks(allocator);
    int secondBlock = Blocks.boundaries(stream).get(1);
    // The kill arrives while the second block's body is being read.
    InputStream in =
        new ActingInputStream(
            new ByteArrayInputStream(stream),
            secondBlock + 30,
            // Short reads, so that the kill lands inside a block, not after a whole-stream read.
            16,
            () -> task.kill("killed mid-read"));
    try (ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator, task)) {
      assertTrue(decoder.next());
      assertTrue(decoder.next(), "the block being read when the kill came is finished");
      assertEquals(20, decoder.root().getRowCount());
      assertTrue(task.isInterrupted());
      assertThrows(FakeTask.KilledException.class, decoder::next);
    }
    task.complete();
  }

  @Test
  void completionClosesTheStreamAndTheCurrentBatch(BufferAllocator allocator) throws IOException {
    FakeTask task = new FakeTask();
    CountingInputStream in = threeBlocksCounted(allocator);
    ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator, task);
    assertTrue(decoder.next());
    assertTrue(allocator.getAllocatedMemory() > 0);

    task.complete();
    assertTrue(in.isClosed());
    assertEquals(0, allocator.getAllocatedMemory(), "the current batch is closed");
    assertThrows(IllegalStateException.class, decoder::root);
    IOException e = assertThrows(IOException.class, decoder::next);
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
    decoder.close(); // closing again is harmless
  }

  /** Completion from another thread unblocks a read stalled on a remote stream. */
  @Test
  void completionUnblocksAStalledRead(BufferAllocator allocator) throws Exception {
    FakeTask task = new FakeTask();
    byte[] stream = threeBlocks(allocator);
    int stallAt = Blocks.boundaries(stream).get(1) + 10;
    StallingInputStream in = new StallingInputStream(new ByteArrayInputStream(stream), stallAt);
    ExecutorService reader = Executors.newSingleThreadExecutor();
    try {
      ShuffleBlockDecoder decoder = new ShuffleBlockDecoder(in, allocator, task);
      Future<Boolean> first = reader.submit(decoder::next);
      assertTrue(first.get(10, TimeUnit.SECONDS));
      Future<Boolean> second = reader.submit(decoder::next);
      assertTrue(in.stalled.await(10, TimeUnit.SECONDS), "the second read should stall");

      task.complete(); // as Spark does when it kills the task and the attempt ends
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> second.get(10, TimeUnit.SECONDS));
      assertInstanceOf(IOException.class, e.getCause());
      assertEquals(0, allocator.getAllocatedMemory(), "completion freed the current batch");
    } finally {
      reader.shutdownNow();
    }
  }

  /** Serves {@code stallAt} bytes, then blocks until closed, like a stuck remote fetch. */
  private static final class StallingInputStream extends FilterInputStream {
    final CountDownLatch stalled = new CountDownLatch(1);
    private final CountDownLatch closed = new CountDownLatch(1);
    private final long stallAt;
    private long position;

    StallingInputStream(InputStream in, long stallAt) {
      super(in);
      this.stallAt = stallAt;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (position >= stallAt) {
        stalled.countDown();
        try {
          closed.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new IOException("stream closed while reading");
      }
      int n = super.read(b, off, (int) Math.min(len, stallAt - position));
      if (n > 0) {
        position += n;
      }
      return n;
    }

    @Override
    public void close() throws IOException {
      closed.countDown();
      super.close();
    }
  }
}
