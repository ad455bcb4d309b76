package org.apache.spark.sql.quiver.vectors

import org.apache.arrow.memory.ArrowBuf
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.sql.vectorized.{ColumnarArray, ColumnarMap, ColumnVector}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/**
 * A Spark `ColumnVector` reading an Arrow column straight from its buffers' memory, with no
 * per-value bounds or null checks: for batches whose buffers Quiver's decode has validated (every
 * buffer as large as its values need, offsets ascending inside their data). What is checked is
 * checked once per batch, when the column is loaded: each buffer's size against the node's length,
 * the first and last offsets against the data. A row outside `0 until length` reads memory that is
 * not the column's, as Spark's own off-heap vectors would.
 *
 * A column is loaded again for every batch (see [[ValidatedColumns]]); it holds no references of
 * its own, so it reads only while the buffers it was loaded from are held (for a broadcast, by the
 * task's hold on its decoded entry), and closing it frees nothing.
 *
 * The getters are those `ArrowColumnVector` answers for the same Arrow type, with the same values;
 * the others throw `UnsupportedOperationException`.
 */
abstract private[quiver] class ValidatedColumnVector(sparkType: DataType)
    extends ColumnVector(sparkType) {

  /** Values in the loaded batch. */
  protected var length: Int = 0
  private var nullCount: Int = 0

  /** Address of the validity bitmap, read only when some values are null and some are not. */
  private var validity: Long = 0L
  private var allNull: Boolean = false

  /** Whether the Arrow type has a validity bitmap (every type Quiver reads but Null). */
  protected def hasValidity: Boolean = true

  /** Loads this column's node and buffers, then its children's, from `source`. */
  final def load(source: BatchBuffers): Unit = {
    val node = source.nextNode()
    length = node.getLength
    nullCount = node.getNullCount
    if (length < 0 || nullCount < 0 || nullCount > length) {
      throw new IllegalStateException(s"a column of $length values has $nullCount nulls")
    }
    allNull = length > 0 && nullCount == length
    validity = 0L
    if (hasValidity) {
      val bitmap = source.nextBuffer()
      if (nullCount > 0 && !allNull) {
        ValidatedColumnVector.need(bitmap, (length + 7L) / 8, "validity bitmap")
        validity = bitmap.memoryAddress()
      }
    }
    loadValues(source)
  }

  /** Loads the value buffers and children that follow the validity bitmap. */
  protected def loadValues(source: BatchBuffers): Unit

  /** Values in the loaded batch. */
  final def valueCount: Int = length

  override def close(): Unit = ()

  override def hasNull: Boolean = nullCount > 0

  override def numNulls: Int = nullCount

  override def isNullAt(rowId: Int): Boolean =
    if (validity != 0L) (Platform.getByte(null, validity + (rowId >> 3)) & (1 << (rowId & 7))) == 0
    else allNull

  private def unsupported(what: String): Nothing =
    throw new UnsupportedOperationException(s"a $dataType column has no $what values")

  override def getBoolean(rowId: Int): Boolean = unsupported("boolean")
  override def getByte(rowId: Int): Byte = unsupported("byte")
  override def getShort(rowId: Int): Short = unsupported("short")
  override def getInt(rowId: Int): Int = unsupported("int")
  override def getLong(rowId: Int): Long = unsupported("long")
  override def getFloat(rowId: Int): Float = unsupported("float")
  override def getDouble(rowId: Int): Double = unsupported("double")
  override def getArray(rowId: Int): ColumnarArray = unsupported("array")
  override def getMap(ordinal: Int): ColumnarMap = unsupported("map")

  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal =
    unsupported("decimal")
  override def getUTF8String(rowId: Int): UTF8String = unsupported("string")
  override def getBinary(rowId: Int): Array[Byte] = unsupported("binary")
  override def getChild(ordinal: Int): ColumnVector = unsupported("child")
}

private[quiver] object ValidatedColumnVector {

  /** Checks, once per batch, that `buffer` holds `bytes`: the check every read then relies on. */
  def need(buffer: ArrowBuf, bytes: Long, what: String): Unit =
    if (buffer.capacity() < bytes) {
      throw new IllegalStateException(
        s"the $what has ${buffer.capacity()} bytes, $bytes needed: not a validated batch"
      )
    }

  /**
   * The address of `length` + 1 four-byte offsets in `offsets`, checked to start at 0 or more and
   * to end at most at `limit` (the data's bytes or the child's values); 0 when `length` is 0. The
   * offsets between ascend: the decode checked that.
   */
  def offsetsOf(offsets: ArrowBuf, length: Int, limit: Long, what: String): Long =
    if (length == 0) 0L
    else {
      need(offsets, (length + 1L) * 4, s"$what offsets buffer")
      val address = offsets.memoryAddress()
      val first = Platform.getInt(null, address)
      val last = Platform.getInt(null, address + 4L * length)
      if (first < 0 || last < first || last > limit) {
        throw new IllegalStateException(
          s"the $what offsets run from $first to $last, outside 0 to $limit: not a validated batch"
        )
      }
      address
    }
}
