package org.apache.spark.sql.quiver

import dev.quiver.ipc.Coalescer
import dev.quiver.spark.QuiverRuntime
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.SparkEnv
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.internal.SQLConf

/**
 * The driver side of an Arrow broadcast: each partition of a `DataFrame` becomes one compressed
 * Arrow IPC stream (encoded on the executors), the driver coalesces them into one stream, and
 * broadcasts the result.
 */
object BroadcastBuilder {

  def build(df: DataFrame): ArrowBroadcast = {
    val sc = df.sparkSession.sparkContext
    val conf = SQLConf.get
    val schema = df.schema
    val timeZoneId = conf.sessionLocalTimeZone
    val maxBatchRows = math.max(1, conf.arrowMaxRecordsPerBatch)
    val partitionStreams = df.queryExecution.toRdd
      .mapPartitions { rows =>
        val allocator =
          QuiverRuntime.allocator.newChildAllocator("quiver-broadcast-encode", 0, Long.MaxValue)
        try {
          val codec = SparkCodec(SparkEnv.get.conf)
          ArrowStreamEncoder
            .encode(rows, schema, timeZoneId, maxBatchRows, codec, allocator)
            .iterator
        } finally allocator.close()
      }
      .collect()
    val allocator =
      QuiverRuntime.allocator.newChildAllocator("quiver-broadcast-coalesce", 0, Long.MaxValue)
    val coalesced =
      try
        Coalescer.coalesce(
          java.util.Arrays.asList(partitionStreams: _*),
          SparkCodec(sc.getConf),
          allocator
        )
      finally allocator.close()
    val value = coalesced.streams().toArray(new Array[Array[Byte]](0))
    ArrowBroadcast(
      sc.broadcast(value),
      schema,
      rows = coalesced.rows(),
      bytes = coalesced.bytes(),
      inputBatches = coalesced.inputBatches(),
      coalesced = coalesced.coalesced()
    )
  }
}
