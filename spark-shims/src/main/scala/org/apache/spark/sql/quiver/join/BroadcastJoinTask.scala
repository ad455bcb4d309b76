package org.apache.spark.sql.quiver.join

import org.apache.spark.sql.quiver.broadcast.ColumnarBatches
import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * What one task of a broadcast join does with its probe partition: read the build side through
 * Quiver's broadcast read path (sharing the decoded copy with the executor's other tasks unless
 * `shareDecoded` is false), index it, and stream the probe rows past it.
 */
final private[quiver] class BroadcastJoinTask(
    spec: JoinSpec,
    broadcast: Broadcast[Array[Array[Byte]]],
    shareDecoded: Boolean
) extends Serializable {

  def run(partitionIndex: Int, probe: Iterator[InternalRow]): Iterator[InternalRow] =
    // Every supported join returns nothing for no probe rows: skip reading the build side.
    if (!probe.hasNext) Iterator.empty
    else {
      val batches = readBuildSide()
      if (spec.kind == JoinKind.NullAwareLeftAnti) nullAwareAnti(probe, table(batches))
      else {
        val matcher = newMatcher(batches, partitionIndex)
        spec.kind match {
          case JoinKind.LeftSemi => probe.filter(matcher.hasMatch)
          case JoinKind.LeftAnti => probe.filterNot(matcher.hasMatch)
          case _ => new JoinedRows(probe, matcher, spec)
        }
      }
    }

  /** Every build batch, kept open until the task ends (the reader closes them then). */
  private def readBuildSide(): IndexedSeq[ColumnarBatch] = {
    val batches = ColumnarBatches.read(broadcast, TaskContext.get(), shareDecoded).keepAll()
    batches.find(_.numCols() != spec.buildWidth).foreach { batch =>
      throw new IllegalStateException(
        s"broadcast ${broadcast.id} has batches of ${batch.numCols()} columns; " +
          s"the join's build side has ${spec.buildWidth}"
      )
    }
    batches
  }

  private def newMatcher(batches: IndexedSeq[ColumnarBatch], partitionIndex: Int): BuildMatcher = {
    val rows = new BuildRows(batches)
    if (spec.isHashJoin) new HashMatcher(table(batches), rows, spec.probeKeys)
    else new NestedLoopMatcher(rows, spec, partitionIndex)
  }

  private def table(batches: IndexedSeq[ColumnarBatch]): BuildSideTable =
    BuildSideTable.build(batches, spec.buildColumns, spec.buildKeys)

  private def nullAwareAnti(
      probe: Iterator[InternalRow],
      table: BuildSideTable
  ): Iterator[InternalRow] =
    if (table.isEmpty) probe
    else if (table.hasNullKey) Iterator.empty
    else {
      val keyOf = UnsafeProjection.create(spec.probeKeys)
      probe.filter { row =>
        val key = keyOf(row)
        !key.anyNull() && table.firstMatch(key) == BuildSideTable.NoMatch
      }
    }
}
