package org.apache.spark.sql.quiver.vectors

import java.nio.ByteOrder
import java.util.{Collections, WeakHashMap}

import org.apache.arrow.vector.{FieldVector, ValueVector}
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch
import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.apache.spark.sql.types.{
  ArrayType,
  BinaryType,
  DataType,
  MapType,
  StringType,
  StructField,
  StructType
}
import org.apache.spark.sql.util.ArrowUtils
import org.apache.spark.sql.vectorized.{ArrowColumnVector, ColumnarBatch, ColumnVector}

/**
 * One stream's columns as [[ValidatedColumnVector]]s, made once and loaded again for every batch
 * of the stream: per batch, only the buffers' addresses are read. The `ColumnarBatch` returned by
 * [[load]] is the same object every time, valid until the next [[load]].
 */
final private[quiver] class ValidatedColumns private (columns: Array[ValidatedColumnVector]) {

  private val batch = new ColumnarBatch(columns.map(c => c: ColumnVector))

  /** Points the columns at `recordBatch`'s buffers (a validated decode's; not retained). */
  def load(recordBatch: ArrowRecordBatch): ColumnarBatch = {
    val buffers = BatchBuffers.of(recordBatch)
    var i = 0
    while (i < columns.length) {
      columns(i).load(buffers)
      if (columns(i).valueCount != recordBatch.getLength) {
        throw new IllegalStateException(
          s"column $i has ${columns(i).valueCount} values in a batch of " +
            s"${recordBatch.getLength} rows"
        )
      }
      i += 1
    }
    buffers.checkConsumed()
    batch.setNumRows(recordBatch.getLength)
    batch
  }
}

private[quiver] object ValidatedColumns {

  /** The reads assume Arrow's little-endian layout in native order. */
  val nativeLittleEndian = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN

  /**
   * Each schema's column specs (None: not read here), worked out once while the schema lives, not
   * once per task: every task that reads a decoded entry reads the same schema. Weak keys, so an
   * entry's schema goes with it.
   */
  private val specsBySchema =
    Collections.synchronizedMap(new WeakHashMap[Schema, Option[Array[ColumnSpec]]]())

  /**
   * Columns for batches of `schema`, or None when a field is dictionary-encoded (its batches hold
   * indices, not values) or of a type only `ArrowColumnVector` reads.
   */
  def forSchema(schema: Schema): Option[ValidatedColumns] = {
    var specs = specsBySchema.get(schema)
    if (specs == null) {
      specs = specsOf(schema)
      specsBySchema.put(schema, specs)
    }
    specs.map(all => new ValidatedColumns(all.map(_.newColumn())))
  }

  private def specsOf(schema: Schema): Option[Array[ColumnSpec]] = {
    val fields = schema.getFields
    val specs = new Array[ColumnSpec](fields.size())
    var i = 0
    var supported = true
    while (supported && i < specs.length) {
      spec(fields.get(i)) match {
        case Some(c) => specs(i) = c
        case None => supported = false
      }
      i += 1
    }
    if (supported) Some(specs) else None
  }

  /**
   * Spark's view of a loaded vector whose buffers came from a validated decode (or were written by
   * Arrow from such buffers, as a decoded dictionary's values are): a [[ValidatedColumnVector]]
   * when it reads the type, else an `ArrowColumnVector`. Loaded once: valid while `vector` is.
   */
  def of(vector: ValueVector): ColumnVector = vector match {
    case loaded: FieldVector =>
      column(loaded.getField) match {
        case Some(c) =>
          val buffers = BatchBuffers.of(loaded)
          c.load(buffers)
          buffers.checkConsumed()
          c
        case None => new ArrowColumnVector(vector)
      }
    case _ => new ArrowColumnVector(vector)
  }

  /** A column for `field` and its children, or None when a type among them is not read here. */
  def column(field: Field): Option[ValidatedColumnVector] = spec(field).map(_.newColumn())

  private def spec(field: Field): Option[ColumnSpec] =
    if (!reads(field)) None else Some(ColumnSpec(field))

  /**
   * Whether a [[ValidatedColumnVector]] reads `field` and its children. Where it does not, Spark's
   * `ArrowColumnVector` reads the field instead, and no view type below it can be read.
   */
  def reads(field: Field): Boolean = nativeLittleEndian && readable(field)

  private def readable(field: Field): Boolean =
    field.getDictionary == null && {
      val children = field.getChildren
      val childrenReadable = {
        var all = true
        var i = 0
        while (all && i < children.size()) {
          all = readable(children.get(i))
          i += 1
        }
        all
      }
      field.getType match {
        case _: ArrowType.Bool | _: ArrowType.Null | _: ArrowType.Utf8 | _: ArrowType.Binary =>
          true
        case int: ArrowType.Int =>
          int.getIsSigned && (int.getBitWidth match {
            case 8 | 16 | 32 | 64 => true
            case _ => false
          })
        case fp: ArrowType.FloatingPoint =>
          fp.getPrecision == FloatingPointPrecision.SINGLE ||
          fp.getPrecision == FloatingPointPrecision.DOUBLE
        case d: ArrowType.Decimal => d.getBitWidth == 128
        case d: ArrowType.Date => d.getUnit == DateUnit.DAY
        case t: ArrowType.Timestamp => t.getUnit == TimeUnit.MICROSECOND
        case _: ArrowType.Struct => childrenReadable
        case _: ArrowType.List => children.size() == 1 && childrenReadable
        case _: ArrowType.Map =>
          children.size() == 1 && children.get(0).getChildren.size() == 2 && childrenReadable
        case other =>
          other.getTypeID.name match {
            case "Utf8View" | "BinaryView" => true
            case "ListView" | "LargeListView" => children.size() == 1 && childrenReadable
            case _ => false
          }
      }
    }

  /**
   * A readable field's column, worked out once: its Spark type (the conversion Spark's own
   * `ArrowColumnVector` makes) and its children's specs; [[newColumn]] makes a fresh column of it.
   */
  final private class ColumnSpec private (
      arrowType: ArrowType,
      sparkType: DataType,
      children: Array[ColumnSpec]
  ) {

    def newColumn(): ValidatedColumnVector = arrowType match {
      case _: ArrowType.Bool => new BooleanColumn(sparkType)
      case _: ArrowType.Null => new NullColumn(sparkType)
      case _: ArrowType.Utf8 | _: ArrowType.Binary => new VariableWidthColumn(sparkType)
      case int: ArrowType.Int =>
        int.getBitWidth match {
          case 8 => new ByteColumn(sparkType)
          case 16 => new ShortColumn(sparkType)
          case 32 => new IntColumn(sparkType)
          case _ => new LongColumn(sparkType)
        }
      case fp: ArrowType.FloatingPoint =>
        if (fp.getPrecision == FloatingPointPrecision.SINGLE) new FloatColumn(sparkType)
        else new DoubleColumn(sparkType)
      case d: ArrowType.Decimal => new DecimalColumn(sparkType, d.getScale)
      case _: ArrowType.Date => new IntColumn(sparkType)
      case _: ArrowType.Timestamp => new LongColumn(sparkType)
      case _: ArrowType.Struct => new StructColumn(sparkType, children.map(_.newColumn()))
      case _: ArrowType.List => new ListColumn(sparkType, children(0).newColumn())
      case _: ArrowType.Map =>
        new MapColumn(sparkType, children(0).newColumn(), children(1).newColumn())
      case view => newViewColumn(view)
    }

    private def newViewColumn(view: ArrowType): ValidatedColumnVector =
      view.getTypeID.name match {
        case "Utf8View" | "BinaryView" => new ByteViewColumn(sparkType)
        case "ListView" => new ListViewColumn(sparkType, 4, children(0).newColumn())
        case "LargeListView" => new ListViewColumn(sparkType, 8, children(0).newColumn())
        case _ => throw new IllegalStateException(s"no column reads $view: readable() let it by")
      }
  }

  private object ColumnSpec {

    /** The spec of a field [[readable]] accepted. */
    def apply(field: Field): ColumnSpec = {
      val children: Seq[Field] = field.getType match {
        // A map's column reads its entries' key and value; the entries struct has no column.
        case _: ArrowType.Map =>
          val entries = field.getChildren.get(0).getChildren
          Seq(entries.get(0), entries.get(1))
        case _ => (0 until field.getChildren.size()).map(i => field.getChildren.get(i))
      }
      new ColumnSpec(field.getType, sparkType(field), children.map(c => apply(c)).toArray)
    }

    /**
     * The Spark type Spark's own conversion gives `field`; for a view type, the type of its
     * counterpart (`Utf8View` a string, `BinaryView` a binary, a list view an array), which Spark's
     * conversion does not know, nor a type with one below it.
     */
    private def sparkType(field: Field): DataType =
      if (!ViewTypes.hasView(field)) ArrowUtils.fromArrowField(field)
      else {
        def child(i: Int) = field.getChildren.get(i)
        field.getType.getTypeID.name match {
          case "Utf8View" => StringType
          case "BinaryView" => BinaryType
          case "ListView" | "LargeListView" | "List" =>
            ArrayType(sparkType(child(0)), child(0).isNullable)
          case "Struct" =>
            StructType((0 until field.getChildren.size()).map { i =>
              StructField(child(i).getName, sparkType(child(i)), child(i).isNullable)
            })
          case "Map" => // its entries' key and value
            val entries = child(0).getChildren
            MapType(sparkType(entries.get(0)), sparkType(entries.get(1)), entries.get(1).isNullable)
          case _ => throw new IllegalStateException(s"no Spark type for ${field.getType} here")
        }
      }
  }
}
