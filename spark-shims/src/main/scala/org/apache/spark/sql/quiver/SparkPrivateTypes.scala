package org.apache.spark.sql.quiver

import dev.quiver.annotation.Internal

/**
 * Names for Spark types that Spark keeps to its own packages, for Quiver's facade to mention: the
 * values engines broadcast are of these types, and an engine that has one is in Spark's packages.
 */
@Internal
object SparkPrivateTypes {

  /** Spark's `ChunkedByteBuffer`, as Comet broadcasts its build sides. */
  type ChunkedByteBuffer = org.apache.spark.util.io.ChunkedByteBuffer
}
