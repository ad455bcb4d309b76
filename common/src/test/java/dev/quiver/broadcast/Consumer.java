package dev.quiver.broadcast;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.TransferPair;

/** What a task does with the views it reads. Every style checks every value it reads. */
enum Consumer {
  /** Closes each view as soon as it has read it. */
  CLOSES_EACH_VIEW,
  /** Never closes a view; the reader (and the task's completion) must. */
  KEEPS_VIEWS_OPEN,
  /** Reads the first batch only, then stops (the task then completes). */
  STOPS_AFTER_FIRST_BATCH,
  /** Transfers each view's buffers to its own allocator, reads them there, then closes them. */
  TRANSFERS_VIEWS_OUT;

  /**
   * Reads {@code reader} as this consumer does.
   *
   * @param own the consumer's allocator (for {@link #TRANSFERS_VIEWS_OUT}); a child of the root the
   *     cache's buffers come from
   * @return batches read
   */
  int consume(BroadcastReader reader, TestBroadcast broadcast, BufferAllocator own) {
    int read = 0;
    while (readOne(reader, broadcast, read, own)) {
      read++;
      if (this == STOPS_AFTER_FIRST_BATCH) {
        return read;
      }
    }
    assertEquals(broadcast.batches().size(), read, "batches read");
    assertFalse(reader.next(), "next() after the end");
    return read;
  }

  /**
   * Reads batch {@code index} (the reader must be just before it) and handles its view.
   *
   * @return false if the reader was at its end (which must be where {@code broadcast} ends)
   */
  boolean readOne(BroadcastReader reader, TestBroadcast broadcast, int index, BufferAllocator own) {
    if (!reader.next()) {
      assertEquals(broadcast.batches().size(), index, "reader ended early");
      return false;
    }
    assertTrue(index < broadcast.batches().size(), "reader has more batches than the broadcast");
    TestBroadcast.ExpectedBatch expected = broadcast.batches().get(index);
    assertEquals(expected.stream, reader.streamIndex(), () -> "stream of batch " + index);
    VectorSchemaRoot view = reader.current();
    switch (this) {
      case CLOSES_EACH_VIEW:
        broadcast.check(expected, view, reader.dictionaries());
        view.close();
        break;
      case KEEPS_VIEWS_OPEN:
      case STOPS_AFTER_FIRST_BATCH:
        broadcast.check(expected, view, reader.dictionaries());
        break;
      case TRANSFERS_VIEWS_OUT:
        transferOut(reader, broadcast, expected, view, own);
        break;
    }
    return true;
  }

  private static void transferOut(
      BroadcastReader reader,
      TestBroadcast broadcast,
      TestBroadcast.ExpectedBatch expected,
      VectorSchemaRoot view,
      BufferAllocator own) {
    int rows = view.getRowCount();
    List<FieldVector> moved = new ArrayList<>();
    try {
      for (FieldVector vector : view.getFieldVectors()) {
        TransferPair transfer = vector.getTransferPair(own);
        transfer.transfer();
        moved.add((FieldVector) transfer.getTo());
      }
      for (FieldVector vector : view.getFieldVectors()) {
        assertEquals(0, vector.getValueCount(), "a transferred view still holds values");
      }
      broadcast.check(expected, moved, rows, reader.dictionaries());
    } finally {
      AutoCloseables.closeNoChecked(AutoCloseables.all(moved));
    }
  }
}
