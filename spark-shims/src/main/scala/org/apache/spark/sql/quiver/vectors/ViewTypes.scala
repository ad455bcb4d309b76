package org.apache.spark.sql.quiver.vectors

import org.apache.arrow.vector.types.pojo.{ArrowType, Field}

/**
 * Arrow's view types, known by their type id names: Arrow 11 and 12, which Spark 3.x ships, have
 * no classes for them (their schemas do not parse there, so these never match on those lines).
 */
private[quiver] object ViewTypes {

  /** `Utf8View` or `BinaryView`: 16-byte views into variadic data buffers. */
  def isByteView(arrowType: ArrowType): Boolean = arrowType.getTypeID.name match {
    case "Utf8View" | "BinaryView" => true
    case _ => false
  }

  /** `ListView` (4-byte offsets and sizes) or `LargeListView` (8-byte). */
  def isListView(arrowType: ArrowType): Boolean = arrowType.getTypeID.name match {
    case "ListView" | "LargeListView" => true
    case _ => false
  }

  def isView(arrowType: ArrowType): Boolean = isByteView(arrowType) || isListView(arrowType)

  /** Whether `field` or a field below it has a view type. */
  def hasView(field: Field): Boolean =
    isView(field.getType) || {
      val children = field.getChildren
      var found = false
      var i = 0
      while (!found && i < children.size()) {
        found = hasView(children.get(i))
        i += 1
      }
      found
    }
}
