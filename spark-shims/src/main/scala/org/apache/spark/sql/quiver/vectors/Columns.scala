package org.apache.spark.sql.quiver.vectors

import java.math.{BigDecimal => JBigDecimal, BigInteger}

import org.apache.spark.sql.quiver.vectors.ValidatedColumnVector.{need, offsetsOf}
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.sql.vectorized.{ColumnarArray, ColumnarMap, ColumnVector}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A column of fixed-width values: the data buffer follows the validity bitmap. */
abstract private[quiver] class FixedWidthColumn(sparkType: DataType, bytesPerValue: Int)
    extends ValidatedColumnVector(sparkType) {

  protected var data: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val buffer = source.nextBuffer()
    need(buffer, length.toLong * bytesPerValue, s"$dataType data buffer")
    data = buffer.memoryAddress()
  }
}

/** Arrow `Bool`: one bit a value, as the validity bitmap. */
final private[quiver] class BooleanColumn(sparkType: DataType)
    extends ValidatedColumnVector(sparkType) {

  private var bits: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val buffer = source.nextBuffer()
    need(buffer, (length + 7L) / 8, "boolean data buffer")
    bits = buffer.memoryAddress()
  }

  override def getBoolean(rowId: Int): Boolean =
    (Platform.getByte(null, bits + (rowId >> 3)) & (1 << (rowId & 7))) != 0
}

final private[quiver] class ByteColumn(sparkType: DataType) extends FixedWidthColumn(sparkType, 1) {
  override def getByte(rowId: Int): Byte = Platform.getByte(null, data + rowId)
}

final private[quiver] class ShortColumn(sparkType: DataType)
    extends FixedWidthColumn(sparkType, 2) {
  override def getShort(rowId: Int): Short = Platform.getShort(null, data + 2L * rowId)
}

/** Arrow `Int(32)` and `Date(DAY)`. */
final private[quiver] class IntColumn(sparkType: DataType) extends FixedWidthColumn(sparkType, 4) {
  override def getInt(rowId: Int): Int = Platform.getInt(null, data + 4L * rowId)
}

/** Arrow `Int(64)` and `Timestamp(MICROSECOND)`, with or without a zone. */
final private[quiver] class LongColumn(sparkType: DataType) extends FixedWidthColumn(sparkType, 8) {
  override def getLong(rowId: Int): Long = Platform.getLong(null, data + 8L * rowId)
}

final private[quiver] class FloatColumn(sparkType: DataType)
    extends FixedWidthColumn(sparkType, 4) {
  override def getFloat(rowId: Int): Float = Platform.getFloat(null, data + 4L * rowId)
}

final private[quiver] class DoubleColumn(sparkType: DataType)
    extends FixedWidthColumn(sparkType, 8) {
  override def getDouble(rowId: Int): Double = Platform.getDouble(null, data + 8L * rowId)
}

/**
 * Arrow `Decimal(precision, scale, 128)`: 16-byte little-endian two's complement unscaled values.
 * One that fits a long at the asked scale is read as the long; any other as a `BigDecimal`, which
 * Spark then rescales and checks against the asked precision as it does for `ArrowColumnVector`.
 */
final private[quiver] class DecimalColumn(sparkType: DataType, vectorScale: Int)
    extends FixedWidthColumn(sparkType, 16) {

  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal =
    if (isNullAt(rowId)) null
    else {
      val address = data + 16L * rowId
      val low = Platform.getLong(null, address)
      val high = Platform.getLong(null, address + 8)
      if (scale == vectorScale && high == (low >> 63)) Decimal(low, precision, scale)
      else {
        val bigEndian = new Array[Byte](16)
        var i = 0
        while (i < 16) {
          bigEndian(15 - i) = Platform.getByte(null, address + i)
          i += 1
        }
        Decimal(new JBigDecimal(new BigInteger(bigEndian), vectorScale), precision, scale)
      }
    }
}

/**
 * A column of byte values, answering for Spark's strings and binaries alike: strings are read in
 * place and binaries copied out, as `ArrowColumnVector` does. Its layouts say where each value is.
 */
abstract private[quiver] class ByteValuesColumn(sparkType: DataType)
    extends ValidatedColumnVector(sparkType) {

  /** The byte length of row `rowId`'s value. */
  protected def valueLength(rowId: Int): Int

  /** The address of row `rowId`'s value, whose length is `valueLength`. */
  protected def valueAddress(rowId: Int, valueLength: Int): Long

  final override def getUTF8String(rowId: Int): UTF8String =
    if (isNullAt(rowId)) null
    else {
      val bytes = valueLength(rowId)
      UTF8String.fromAddress(null, valueAddress(rowId, bytes), bytes)
    }

  final override def getBinary(rowId: Int): Array[Byte] =
    if (isNullAt(rowId)) null
    else {
      val bytes = new Array[Byte](valueLength(rowId))
      val from = valueAddress(rowId, bytes.length)
      Platform.copyMemory(null, from, bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length)
      bytes
    }
}

/** Arrow `Utf8` and `Binary`: four-byte offsets, then the bytes. */
final private[quiver] class VariableWidthColumn(sparkType: DataType)
    extends ByteValuesColumn(sparkType) {

  private var offsets: Long = 0L
  private var data: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val offsetBuffer = source.nextBuffer()
    val dataBuffer = source.nextBuffer()
    offsets = offsetsOf(offsetBuffer, length, dataBuffer.capacity(), s"$dataType")
    data = dataBuffer.memoryAddress()
  }

  override protected def valueLength(rowId: Int): Int =
    Platform.getInt(null, offsets + 4L * rowId + 4) - Platform.getInt(null, offsets + 4L * rowId)

  override protected def valueAddress(rowId: Int, valueLength: Int): Long =
    data + Platform.getInt(null, offsets + 4L * rowId)
}

/** Arrow `Null`: no buffers, every value null. */
final private[quiver] class NullColumn(sparkType: DataType)
    extends ValidatedColumnVector(sparkType) {

  override protected def hasValidity: Boolean = false

  override protected def loadValues(source: BatchBuffers): Unit = ()

  override def isNullAt(rowId: Int): Boolean = true
}

/** Arrow `Struct`: a validity bitmap, then each child, at least as long as the struct. */
final private[quiver] class StructColumn(
    sparkType: DataType,
    children: Array[ValidatedColumnVector]
) extends ValidatedColumnVector(sparkType) {

  override protected def loadValues(source: BatchBuffers): Unit = {
    var i = 0
    while (i < children.length) {
      children(i).load(source)
      if (children(i).valueCount < length) {
        throw new IllegalStateException(
          s"a struct of $length values has a child of ${children(i).valueCount}"
        )
      }
      i += 1
    }
  }

  override def getChild(ordinal: Int): ColumnVector = children(ordinal)
}

/** Arrow `List`: four-byte offsets into one child of elements. */
final private[quiver] class ListColumn(sparkType: DataType, elements: ValidatedColumnVector)
    extends ValidatedColumnVector(sparkType) {

  private var offsets: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val offsetBuffer = source.nextBuffer()
    elements.load(source)
    offsets = offsetsOf(offsetBuffer, length, elements.valueCount.toLong, "list")
  }

  override def getArray(rowId: Int): ColumnarArray =
    if (isNullAt(rowId)) null
    else {
      val from = Platform.getInt(null, offsets + 4L * rowId)
      val to = Platform.getInt(null, offsets + 4L * rowId + 4)
      new ColumnarArray(elements, from, to - from)
    }
}

/**
 * Arrow `Map`: four-byte offsets into a child struct of entries whose children are the keys and
 * the values. The entries' own validity is not read (a map's entries are never null).
 */
final private[quiver] class MapColumn(
    sparkType: DataType,
    keys: ValidatedColumnVector,
    values: ValidatedColumnVector
) extends ValidatedColumnVector(sparkType) {

  private var offsets: Long = 0L

  override protected def loadValues(source: BatchBuffers): Unit = {
    val offsetBuffer = source.nextBuffer()
    source.nextNode() // the entries struct
    source.nextBuffer() // its validity bitmap
    keys.load(source)
    values.load(source)
    val entries = math.min(keys.valueCount, values.valueCount).toLong
    offsets = offsetsOf(offsetBuffer, length, entries, "map")
  }

  override def getMap(rowId: Int): ColumnarMap =
    if (isNullAt(rowId)) null
    else {
      val from = Platform.getInt(null, offsets + 4L * rowId)
      val to = Platform.getInt(null, offsets + 4L * rowId + 4)
      new ColumnarMap(keys, values, from, to - from)
    }
}
