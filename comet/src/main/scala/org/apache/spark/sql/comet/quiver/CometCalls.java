package org.apache.spark.sql.comet.quiver;

import org.apache.comet.shaded.arrow.memory.BufferAllocator;
import org.apache.comet.shaded.arrow.vector.VectorSchemaRoot;
import org.apache.comet.shaded.arrow.vector.dictionary.DictionaryProvider;
import org.apache.comet.vector.NativeUtil$;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Calls into Comet's Scala objects that take its relocated Arrow types, made from Java: Comet's jar
 * relocates Arrow in its bytecode but not in its Scala signatures, so Scala code sees these methods
 * with Arrow's own types, and only Java sees what the bytecode takes.
 */
final class CometCalls {

  private CometCalls() {}

  /** Comet's root allocator, of every Arrow buffer Comet's JVM side holds. */
  static BufferAllocator cometAllocator() {
    return org.apache.comet.package$.MODULE$.CometArrowAllocator();
  }

  /** {@code root} as Comet's columns, the form its native operators take (no copy). */
  static ColumnarBatch rootAsBatch(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    return NativeUtil$.MODULE$.rootAsBatch(root, dictionaries);
  }
}
