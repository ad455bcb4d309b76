package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal

/** Java lists as Scala sequences, for the facade's Java-friendly overloads. */
@Internal
object JavaLists {

  // scala.collection.JavaConverters is deprecated in 2.13 and its replacement is missing in 2.12.
  def toSeq[T](list: java.util.List[T]): Seq[T] = {
    val seq = Seq.newBuilder[T]
    val it = list.iterator()
    while (it.hasNext) seq += it.next()
    seq.result()
  }
}
