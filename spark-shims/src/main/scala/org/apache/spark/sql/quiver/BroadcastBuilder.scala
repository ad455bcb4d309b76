package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal
import dev.quiver.ipc.Coalescer
import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.SparkContext
import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.errors.QueryExecutionErrors
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/**
 * The driver side of an Arrow broadcast: each partition of a `DataFrame` becomes one compressed
 * Arrow IPC stream (encoded on the executors), the driver coalesces them into one stream, checks
 * Spark's broadcast limits, and broadcasts the result.
 */
@Internal
object BroadcastBuilder {

  /**
   * Spark's cap on the rows of one broadcast table (`BroadcastExchangeExec`), fixed and the same in
   * every supported release, 3.4 to 4.2. (From 4.0 Spark lowers it for a hash relation not keyed
   * by one long; an Arrow broadcast is no hash relation.) Like Spark, a table of exactly this many
   * rows is refused.
   */
  val MaxTableRows: Long = 512000000L

  /** The key of Spark's cap on the bytes of one broadcast table, read by Spark 4.1 and later. */
  val MaxTableSizeKey = "spark.sql.maxBroadcastTableSize"

  /** Spark's fixed cap on the bytes of one broadcast table before 4.1, and the key's default. */
  val DefaultMaxTableBytes: Long = 8L << 30

  /**
   * Spark's cap on the bytes of one broadcast table, as the running release has it:
   * `spark.sql.maxBroadcastTableSize` of `conf` on Spark 4.1 and later (default 8 GiB), the fixed
   * 8 GiB of `BroadcastExchangeExec` on 3.4 to 4.0, whose Spark does not define the key (a value
   * set for it there does nothing in Spark, so nothing here either). Quiver applies it to the
   * compressed streams it broadcasts (what every executor fetches); the decoded size on an executor
   * is capped by `spark.quiver.broadcast.maxDecodedBytes`.
   */
  def maxTableBytes(conf: SQLConf): Long =
    if (SQLConf.containsConfigKey(MaxTableSizeKey)) {
      // Through Spark's own entry, so with its parsing ("8g") and its default.
      conf.getConf(ConfigEntry.findEntry(MaxTableSizeKey).asInstanceOf[ConfigEntry[Long]])
    } else DefaultMaxTableBytes

  def build(df: DataFrame): ArrowBroadcast = build(df, MaxTableRows, maxTableBytes(SQLConf.get))

  /** [[build]] with the limits as parameters, so that tests can use tiny ones. */
  private[quiver] def build(df: DataFrame, maxRows: Long, maxBytes: Long): ArrowBroadcast = {
    val conf = SQLConf.get
    val schema = df.schema
    val timeZoneId = conf.sessionLocalTimeZone
    val maxBatchRows = math.max(1, conf.arrowMaxRecordsPerBatch)
    val partitions = df.queryExecution.toRdd
      .mapPartitions(rows => encodePartition(rows, schema, timeZoneId, maxBatchRows).iterator)
      .collect()
    // Checked before coalescing, so that an oversized table is not decoded on the driver.
    checkRows(partitions.map(_.rows).sum, maxRows)
    fromStreams(
      df.sparkSession.sparkContext,
      schema,
      partitions.map(_.stream).toSeq,
      maxRows,
      maxBytes
    )
  }

  /**
   * Broadcasts compressed Arrow IPC streams an engine already has (one per source partition,
   * say), all of `schema` and compressed with Spark's configured codec: coalesces them (unless
   * they carry dictionaries), checks Spark's limits, and broadcasts the result.
   */
  def fromStreams(sc: SparkContext, schema: StructType, streams: Seq[Array[Byte]]): ArrowBroadcast =
    fromStreams(sc, schema, streams, MaxTableRows, maxTableBytes(SQLConf.get))

  private[quiver] def fromStreams(
      sc: SparkContext,
      schema: StructType,
      streams: Seq[Array[Byte]],
      maxRows: Long,
      maxBytes: Long
  ): ArrowBroadcast = {
    val allocator =
      QuiverRuntime.allocator.newChildAllocator("quiver-broadcast-coalesce", 0, Long.MaxValue)
    val coalesced =
      try
        Coalescer.coalesce(java.util.Arrays.asList(streams: _*), SparkCodec(sc.getConf), allocator)
      finally allocator.close()
    checkRows(coalesced.rows(), maxRows)
    checkBytes(coalesced.bytes(), maxBytes)
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

  /** One source partition, encoded: its row count and its stream. */
  final private case class EncodedPartition(rows: Long, stream: Array[Byte])

  /** Runs on an executor; an empty partition gives nothing. */
  private def encodePartition(
      rows: Iterator[InternalRow],
      schema: StructType,
      timeZoneId: String,
      maxBatchRows: Int
  ): Option[EncodedPartition] = {
    var count = 0L
    val counted = rows.map { row =>
      count += 1
      row
    }
    val allocator =
      QuiverRuntime.allocator.newChildAllocator("quiver-broadcast-encode", 0, Long.MaxValue)
    try {
      val codec = QuiverRuntime.broadcastCodec
      ArrowStreamEncoder
        .encode(counted, schema, timeZoneId, maxBatchRows, codec, allocator)
        .map(stream => EncodedPartition(count, stream))
    } finally allocator.close()
  }

  // Spark's comparisons: a table at the limit is already refused.
  private def checkRows(rows: Long, maxRows: Long): Unit =
    if (rows >= maxRows) {
      throw QueryExecutionErrors.cannotBroadcastTableOverMaxTableRowsError(maxRows, rows)
    }

  private def checkBytes(bytes: Long, maxBytes: Long): Unit =
    if (bytes >= maxBytes) {
      throw QueryExecutionErrors.cannotBroadcastTableOverMaxTableBytesError(maxBytes, bytes)
    }
}
