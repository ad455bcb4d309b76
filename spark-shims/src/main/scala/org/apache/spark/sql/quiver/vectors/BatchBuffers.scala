package org.apache.spark.sql.quiver.vectors

import java.util.{ArrayList => JArrayList, List => JList}

import org.apache.arrow.memory.ArrowBuf
import org.apache.arrow.vector.FieldVector
import org.apache.arrow.vector.ipc.message.{ArrowFieldNode, ArrowRecordBatch}

/**
 * The field nodes and buffers of one batch in Arrow IPC order (a column's node, then its buffers,
 * then its children's), handed out one at a time to the columns that load from them.
 */
final private[quiver] class BatchBuffers private (
    nodes: JList[ArrowFieldNode],
    buffers: JList[ArrowBuf]
) {

  private var node = 0
  private var buffer = 0

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

  /** Every node and buffer was used: the columns match the batch's layout. */
  def checkConsumed(): Unit =
    if (node != nodes.size() || buffer != buffers.size()) {
      throw new IllegalStateException(
        s"the columns read $node of ${nodes.size()} field nodes and $buffer of " +
          s"${buffers.size()} buffers: they do not match the batch's schema"
      )
    }

  private def fail(what: String, index: Int, count: Int): Nothing =
    throw new IllegalStateException(
      s"the columns ask for $what $index of a batch that has $count: they do not match its schema"
    )
}

private[quiver] object BatchBuffers {

  /** A decoded record batch's nodes and buffers (shared: neither retained nor released). */
  def of(batch: ArrowRecordBatch): BatchBuffers = new BatchBuffers(batch.getNodes, batch.getBuffers)

  /** The nodes and buffers of a loaded vector and its children, as Arrow's unloader walks them. */
  def of(vector: FieldVector): BatchBuffers = {
    val nodes = new JArrayList[ArrowFieldNode]()
    val buffers = new JArrayList[ArrowBuf]()
    def walk(v: FieldVector): Unit = {
      nodes.add(new ArrowFieldNode(v.getValueCount.toLong, v.getNullCount.toLong))
      buffers.addAll(v.getFieldBuffers)
      val children = v.getChildrenFromFields
      var i = 0
      while (i < children.size()) {
        walk(children.get(i))
        i += 1
      }
    }
    walk(vector)
    new BatchBuffers(nodes, buffers)
  }
}
