package org.apache.spark.sql.quiver.vectors

import java.lang.{Long => JLong}
import java.util.{ArrayList => JArrayList, List => JList}

import dev.quiver.ipc.VariadicBufferCounts
import org.apache.arrow.memory.ArrowBuf
import org.apache.arrow.vector.FieldVector
import org.apache.arrow.vector.ipc.message.{ArrowFieldNode, ArrowRecordBatch}

/**
 * The field nodes and buffers of one batch in Arrow IPC order (a column's node, then its buffers,
 * then its children's), handed out one at a time to the columns that load from them; and its
 * variadic buffer counts, one for each view column (Utf8View, BinaryView) in the same order: how
 * many data buffers follow that column's views buffer.
 */
final private[quiver] class BatchBuffers private (
    nodes: JList[ArrowFieldNode],
    buffers: JList[ArrowBuf],
    variadicCounts: JList[JLong]
) {

  private var node = 0
  private var buffer = 0
  private var variadic = 0

  def nextNode(): ArrowFieldNode = {
    if (node >= nodes.size()) fail("field node", node, nodes.size())
    node += 1
    nodes.get(node - 1)
  }

  def nextBuffer(): ArrowBuf = {
    if (buffer >= buffers.size()) fail("buffer", buffer, buffers.size())
    buffer += 1
    buffers.get(buffer - 1)
  }

  /** The number of data buffers of the next view column, at most the buffers not yet handed out. */
  def nextVariadicCount(): Int = {
    if (variadic >= variadicCounts.size()) {
      fail("variadic buffer count", variadic, variadicCounts.size())
    }
    variadic += 1
    val count = variadicCounts.get(variadic - 1).longValue()
    if (count < 0 || count > buffers.size() - buffer) {
      throw new IllegalStateException(
        s"variadic buffer count ${variadic - 1} is $count with ${buffers.size() - buffer} " +
          "buffers left: not a validated batch"
      )
    }
    count.toInt
  }

  /** Every node, buffer and count was used: the columns match the batch's layout. */
  def checkConsumed(): Unit =
    if (node != nodes.size() || buffer != buffers.size() || variadic != variadicCounts.size()) {
      throw new IllegalStateException(
        s"the columns read $node of ${nodes.size()} field nodes, $buffer of " +
          s"${buffers.size()} buffers and $variadic of ${variadicCounts.size()} variadic buffer " +
          "counts: they do not match the batch's schema"
      )
    }

  private def fail(what: String, index: Int, count: Int): Nothing =
    throw new IllegalStateException(
      s"the columns ask for $what $index of a batch that has $count: they do not match its schema"
    )
}

private[quiver] object BatchBuffers {

  /** A decoded record batch's nodes and buffers (shared: neither retained nor released). */
  def of(batch: ArrowRecordBatch): BatchBuffers =
    new BatchBuffers(batch.getNodes, batch.getBuffers, VariadicBufferCounts.of(batch))

  /** The nodes and buffers of a loaded vector and its children, as Arrow's unloader walks them. */
  def of(vector: FieldVector): BatchBuffers = {
    val nodes = new JArrayList[ArrowFieldNode]()
    val buffers = new JArrayList[ArrowBuf]()
    val variadicCounts = new JArrayList[JLong]()
    def walk(v: FieldVector): Unit = {
      nodes.add(new ArrowFieldNode(v.getValueCount.toLong, v.getNullCount.toLong))
      val own = v.getFieldBuffers
      buffers.addAll(own)
      // A view vector's buffers are its validity, its views, then its data buffers.
      if (ViewTypes.isByteView(v.getField.getType))
        variadicCounts.add(JLong.valueOf(own.size() - 2L))
      val children = v.getChildrenFromFields
      var i = 0
      while (i < children.size()) {
        walk(children.get(i))
        i += 1
      }
    }
    walk(vector)
    new BatchBuffers(nodes, buffers, variadicCounts)
  }
}
