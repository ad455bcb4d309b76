package org.apache.spark.sql.quiver.vectors

import org.apache.spark.sql.quiver.vectors.ValidatedColumnVector.need
import org.apache.spark.sql.types.DataType
import org.apache.spark.sql.vectorized.ColumnarArray
import org.apache.spark.unsafe.Platform

/**
 * Arrow `Utf8View` and `BinaryView`: a 16-byte view per value, its length first; a value of up to
 * 12 bytes is inline in the view, a longer one in one of the column's variadic data buffers, at
 * the buffer index and offset the view's last 8 bytes give. The decode checked every non-null
 * view's length, buffer index and bytes against the buffers (`BatchChecks`; every view, where the
 * node counts no nulls), or Arrow wrote the views from such a decode's (a dictionary's values
 * decoded); null views are never read.
 */
final private[quiver] class ByteViewColumn(sparkType: DataType)
    extends ByteValuesColumn(sparkType) {

  private var views: Long = 0L

  /** The data buffers' addresses, by the index a view names; reused while the count holds. */
  private var dataBuffers: Array[Long] = new Array[Long](0)

  override protected def loadValues(source: BatchBuffers): Unit = {
    val viewBuffer = source.nextBuffer()
    need(viewBuffer, length * ByteViewColumn.ViewBytes, s"$dataType views buffer")
    views = viewBuffer.memoryAddress()
    val count = source.nextVariadicCount()
    if (dataBuffers.length != count) dataBuffers = new Array[Long](count)
    var i = 0
    while (i < count) {
      dataBuffers(i) = source.nextBuffer().memoryAddress()
      i += 1
    }
  }

  override protected def valueLength(rowId: Int): Int =
    Platform.getInt(null, views + ByteViewColumn.ViewBytes * rowId)

  override protected def valueAddress(rowId: Int, valueLength: Int): Long = {
    val view = views + ByteViewColumn.ViewBytes * rowId
    if (valueLength <= ByteViewColumn.InlineBytes) view + 4
    else dataBuffers(Platform.getInt(null, view + 8)) + Platform.getInt(null, view + 12)
  }
}

private object ByteViewColumn {
  val ViewBytes = 16L
  val InlineBytes = 12
}

/**
 * Arrow `ListView` (`offsetBytes` 4) and `LargeListView` (8): per row an offset and a size into
 * one child of elements, in any order and overlapping. The decode checked every row's offset and
 * size to lie inside the child, null rows too (`BatchChecks`).
 */
final private[quiver] class ListViewColumn(
    sparkType: DataType,
    offsetBytes: Int,
    elements: ValidatedColumnVector
) extends ValidatedColumnVector(sparkType) {

  private var offsets: Long = 0L
  private var sizes: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val offsetBuffer = source.nextBuffer()
    val sizeBuffer = source.nextBuffer()
    elements.load(source)
    need(offsetBuffer, length.toLong * offsetBytes, "list view offsets buffer")
    need(sizeBuffer, length.toLong * offsetBytes, "list view sizes buffer")
    offsets = offsetBuffer.memoryAddress()
    sizes = sizeBuffer.memoryAddress()
  }

  /** Element `rowId` of `buffer`: the child's bounds, checked by the decode, fit an int. */
  private def read(buffer: Long, rowId: Int): Int =
    if (offsetBytes == 4) Platform.getInt(null, buffer + 4L * rowId)
    else Platform.getLong(null, buffer + 8L * rowId).toInt

  override def getArray(rowId: Int): ColumnarArray =
    if (isNullAt(rowId)) null
    else new ColumnarArray(elements, read(offsets, rowId), read(sizes, rowId))
}
