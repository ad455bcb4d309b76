package org.apache.spark.sql.quiver

import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.spark.sql.types._

/**
 * Spark SQL types as Arrow types, the way Spark's own Arrow conversion lays them out (so that
 * Spark's `ArrowWriter` and `ArrowColumnVector` accept the vectors). Written here because the
 * signature of Spark's converter differs between 3.4 and 3.5.
 */
private[quiver] object ArrowSchemas {

  def toArrow(schema: StructType, timeZoneId: String): Schema =
    new Schema(
      javaList(schema.fields.toSeq.map(f => toArrow(f.name, f.dataType, f.nullable, timeZoneId)))
    )

  def toArrow(name: String, dataType: DataType, nullable: Boolean, timeZoneId: String): Field =
    dataType match {
      case ArrayType(elementType, containsNull) =>
        val element = toArrow("element", elementType, containsNull, timeZoneId)
        new Field(name, fieldType(nullable, ArrowType.List.INSTANCE), javaList(Seq(element)))
      case StructType(fields) =>
        val children = fields.toSeq.map(f => toArrow(f.name, f.dataType, f.nullable, timeZoneId))
        new Field(name, fieldType(nullable, ArrowType.Struct.INSTANCE), javaList(children))
      case MapType(keyType, valueType, valueContainsNull) =>
        val entries = new Field(
          "entries",
          fieldType(nullable = false, ArrowType.Struct.INSTANCE),
          javaList(
            Seq(
              toArrow("key", keyType, nullable = false, timeZoneId),
              toArrow("value", valueType, valueContainsNull, timeZoneId)
            )
          )
        )
        new Field(name, fieldType(nullable, new ArrowType.Map(false)), javaList(Seq(entries)))
      case other =>
        new Field(name, fieldType(nullable, primitive(other, timeZoneId)), null)
    }

  // scala.collection.JavaConverters is deprecated in 2.13 and its replacement is missing in 2.12.
  private def javaList(fields: Seq[Field]): java.util.List[Field] = {
    val list = new java.util.ArrayList[Field](fields.size)
    fields.foreach(list.add)
    list
  }

  private def fieldType(nullable: Boolean, arrowType: ArrowType): FieldType =
    new FieldType(nullable, arrowType, null)

  private def primitive(dataType: DataType, timeZoneId: String): ArrowType = dataType match {
    case BooleanType => ArrowType.Bool.INSTANCE
    case ByteType => new ArrowType.Int(8, true)
    case ShortType => new ArrowType.Int(16, true)
    case IntegerType => new ArrowType.Int(32, true)
    case LongType => new ArrowType.Int(64, true)
    case FloatType => new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)
    case DoubleType => new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)
    case d: DecimalType => new ArrowType.Decimal(d.precision, d.scale, 128)
    case _: StringType => ArrowType.Utf8.INSTANCE
    case BinaryType => ArrowType.Binary.INSTANCE
    case DateType => new ArrowType.Date(DateUnit.DAY)
    case TimestampType => new ArrowType.Timestamp(TimeUnit.MICROSECOND, timeZoneId)
    case TimestampNTZType => new ArrowType.Timestamp(TimeUnit.MICROSECOND, null)
    case NullType => ArrowType.Null.INSTANCE
    case other =>
      throw new UnsupportedOperationException(s"Quiver cannot encode $other as Arrow")
  }
}
