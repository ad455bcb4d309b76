package dev.quiver.examples

import org.apache.spark.sql.SparkSession

/**
 * The examples of docs/engines.md, kept here so that they compile against Quiver's API alone (this
 * package sees nothing internal) and a test runs them. DocExamplesSuite checks that each region
 * between the markers is, character for character, a code block of the guide.
 */
object EnginesExample {

  // docs/engines.md: begin
  /** An engine's broadcast value: its build side as compressed Arrow IPC streams, and more. */
  final case class EngineBuildSide(streams: Array[Array[Byte]], keyColumn: Int)
  // docs/engines.md: end

  /** What the examples computed, for the suite to check. */
  final case class Results(jvmRowsPerTask: Seq[Long], nativeTableBytesPerTask: Seq[Long])

  def run(spark: SparkSession): Results = {
    // docs/engines.md: begin
    import dev.quiver.spark.broadcast.{ArrowBroadcast, BroadcastStreams, QuiverBroadcasts}

    // Compressed Arrow IPC streams, as an engine holds them (here, Quiver encodes a DataFrame).
    val streams = ArrowBroadcast.of(spark.range(0, 1000).selectExpr("id", "id % 7 AS segment"))
    val buildSide =
      spark.sparkContext.broadcast(EngineBuildSide(streams.value.value, keyColumn = 0))

    // How to see the streams in the engine's value: in place, never copied.
    val buildSideStreams = BroadcastStreams.byteArrays.from((side: EngineBuildSide) => side.streams)

    val rowsPerTask = spark.sparkContext
      .parallelize(0 until 4, 4)
      .mapPartitions { _ =>
        // In a task: the executor's cache decodes the broadcast once for the tasks that read it.
        val reader = QuiverBroadcasts.open(buildSide, buildSideStreams, share = true)
        val batches = QuiverBroadcasts.columnarBatches(reader) // Spark's ColumnarBatch
        Iterator(batches.map(_.numRows().toLong).sum)
      }
      .collect()
    // docs/engines.md: end

    // docs/engines.md: begin
    import dev.quiver.broadcast.{BroadcastDecoder, DerivedValue, KeptSource}

    val tableBytes = spark.sparkContext
      .parallelize(0 until 4, 4)
      .mapPartitions { _ =>
        // Keep the streams as broadcast: the engine builds its own structure from them.
        val reader = QuiverBroadcasts
          .open(buildSide, buildSideStreams, BroadcastDecoder.keepSource(), share = true)
        // Built once per executor and kept while the entry is, its native bytes accounted in
        // Spark's storage memory, and released exactly once when the entry goes.
        val table = reader.derived(
          "engine-hash-table",
          (building, _) => {
            val kept = building.decoded(classOf[KeptSource])
            val table = NativeTable.build(kept) // the engine's native build
            DerivedValue.ofNative(table, table.nativeBytes, table)
          }
        )
        Iterator(table.nativeBytes)
      }
      .collect()
    // docs/engines.md: end

    streams.value.destroy()
    buildSide.destroy()
    Results(rowsPerTask.toSeq, tableBytes.toSeq)
  }

  /**
   * A stand-in for an engine's native hash table: the decompressed streams in direct memory, where
   * native code would build its table, and a release where it would free it.
   */
  final class NativeTable private (memory: java.nio.ByteBuffer) extends AutoCloseable {
    @volatile private var released = false

    def nativeBytes: Long = memory.capacity().toLong

    override def close(): Unit = {
      require(!released, "a native table released twice")
      released = true
    }
  }

  object NativeTable {

    def build(kept: dev.quiver.broadcast.KeptSource): NativeTable = {
      val out = new java.io.ByteArrayOutputStream()
      for (i <- 0 until kept.streamCount()) {
        val in = kept.openDecompressed(i)
        try in.transferTo(out)
        finally in.close()
      }
      val bytes = out.toByteArray
      val memory = java.nio.ByteBuffer.allocateDirect(bytes.length)
      memory.put(bytes).flip()
      new NativeTable(memory)
    }
  }
}
