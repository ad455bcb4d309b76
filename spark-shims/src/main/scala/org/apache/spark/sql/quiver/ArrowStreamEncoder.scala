package org.apache.spark.sql.quiver

import java.io.ByteArrayOutputStream

import dev.quiver.codec.StreamCodec
import dev.quiver.io.PiecewiseOutputChannel
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.ipc.ArrowStreamWriter
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.arrow.ArrowWriter
import org.apache.spark.sql.types.StructType

/**
 * Encodes Spark rows as one compressed Arrow IPC stream, in batches of at most `maxBatchRows`
 * rows. Written once for every release: Spark's `ArrowWriter.create(root)` is stable.
 */
private[quiver] object ArrowStreamEncoder {

  /** The stream, or `None` when `rows` is empty (an empty partition gives no stream). */
  def encode(
      rows: Iterator[InternalRow],
      schema: StructType,
      timeZoneId: String,
      maxBatchRows: Int,
      codec: StreamCodec,
      allocator: BufferAllocator
  ): Option[Array[Byte]] =
    if (!rows.hasNext) None
    else {
      val root = VectorSchemaRoot.create(ArrowSchemas.toArrow(schema, timeZoneId), allocator)
      try {
        val bytes = new ByteArrayOutputStream()
        val rowWriter = ArrowWriter.create(root)
        val out =
          new ArrowStreamWriter(root, null, new PiecewiseOutputChannel(codec.compress(bytes)))
        try {
          out.start()
          while (rows.hasNext) {
            var n = 0
            while (n < maxBatchRows && rows.hasNext) {
              rowWriter.write(rows.next())
              n += 1
            }
            rowWriter.finish()
            out.writeBatch()
            rowWriter.reset()
          }
          out.end()
        } finally out.close()
        Some(bytes.toByteArray)
      } finally root.close()
    }
}
