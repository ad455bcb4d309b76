package org.apache.spark.sql.quiver.cluster

import java.nio.ByteBuffer
import java.nio.file.{Files, Paths}

import dev.quiver.spark.QuiverMetrics
import dev.quiver.spark.broadcast.{BroadcastStreams, QuiverBroadcasts}
import dev.quiver.testing.KeepingCDataConsumer
import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.storage.{StorageLevel, TestBlockId}
import org.apache.spark.util.io.ChunkedByteBuffer

/** What [[ClusterFaultSuite]]'s tasks do on the executors to reach their fault states. */
object ClusterFaultTasks {

  /** The file whose existence lets the consumers release what they keep. */
  val Release = "release"

  /** This executor JVM's native-style consumer: it keeps what tasks export until told. */
  lazy val consumer = new KeepingCDataConsumer()

  /**
   * Exports the task's batches of `value` to the JVM's consumer, which imports them on its own
   * thread and keeps them; the task's end asks the consumer to release them once `folder/release`
   * exists (after the task, on the consumer's thread). Then waits, its export out, for `folder/go`.
   */
  def exportKeptByConsumer(
      value: Broadcast[Array[Array[Byte]]],
      folder: String
  ): ClusterTasks.Read = {
    val reader = QuiverBroadcasts.open(value, BroadcastStreams.byteArrays, share = true)
    val task = TaskContext.get()
    val holder = s"consumer of task ${task.taskAttemptId()}"
    val rowsAndSum = consumer.exportAndKeep(reader, holder, 1)
    val release = Paths.get(folder, Release)
    task.addTaskCompletionListener[Unit] { _ =>
      consumer.releaseWhen(holder, () => Files.exists(release))
    }
    FaultSignals.signalThenWait(folder, s"unreleased=${consumer.unreleased()}")
    ClusterTasks.Read(ClusterTasks.executorId, ClusterTasks.pid, rowsAndSum(0), rowsAndSum(1))
  }

  /** Block ids of the storage memory [[pressStorage]] takes. */
  private val PressurePrefix = "quiver-pressure-"

  /**
   * Puts storage pressure on the executor (once per JVM), then reads `value`: its open finds the
   * executor's idle retained entry under pressure and evicts it. Then waits for `folder/go`.
   */
  def readUnderPressure(value: Broadcast[Array[Array[Byte]]], folder: String): ClusterTasks.Read = {
    pressStorage()
    val reader = QuiverBroadcasts.open(value, BroadcastStreams.byteArrays, share = true)
    ClusterTasks.read(
      QuiverBroadcasts.columnarBatches(reader),
      () => {
        val evictions = QuiverMetrics.broadcastCache.pressureEvictions()
        FaultSignals.signalThenWait(folder, s"pressureEvictions=$evictions")
      }
    )
  }

  /**
   * A block of bytes in Spark's memory store that leaves a twentieth of the storage memory free
   * (Quiver sees pressure below a tenth), unless less is free already.
   */
  private def pressStorage(): Unit = synchronized {
    val env = SparkEnv.get
    val memory = env.memoryManager
    val free = memory.maxOnHeapStorageMemory - memory.onHeapStorageMemoryUsed
    val bytes = free - memory.maxOnHeapStorageMemory / 20
    if (bytes > 0) {
      val attempt = TaskContext.get().taskAttemptId()
      val block = TestBlockId(s"$PressurePrefix${ClusterTasks.executorId}-$attempt")
      val data = new ChunkedByteBuffer(ByteBuffer.allocate(bytes.toInt))
      val stored = env.blockManager.putBytes[Array[Byte]](
        block,
        data,
        StorageLevel.MEMORY_ONLY_SER,
        tellMaster = false
      )
      require(stored, s"no room for $bytes bytes of pressure")
    }
  }

  /** Removes this JVM's pressure blocks (returns how many): the storage memory is Spark's again. */
  def relieveStorage(): Long = {
    val blocks = SparkEnv.get.blockManager
    val pressure = blocks.getMatchingBlockIds(_.name.startsWith(s"test_$PressurePrefix"))
    pressure.foreach(blocks.removeBlock(_))
    pressure.size.toLong
  }
}
