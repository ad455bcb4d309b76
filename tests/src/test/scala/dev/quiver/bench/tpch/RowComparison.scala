package dev.quiver.bench.tpch

import org.apache.spark.sql.Row

/**
 * Two settings' answers to one query, row by row in the order the query returned them (every
 * TPC-H query orders its rows or returns one).
 *
 * Exact compares every value with `equals`: two engines that run the same operators on the same
 * data (Comet and Comet on Quiver) must give the very same values. Otherwise floating values
 * (`double`, `float`) may differ by a relative [[FloatTolerance]], since engines may add them in
 * different orders; everything else, decimals included, must be equal in value.
 */
object RowComparison {

  /** The relative difference two engines' floating values may have. */
  val FloatTolerance = 1e-9

  /** At most this many differing rows are described. */
  private val Shown = 3

  /** None when the answers agree, else what differs (row counts, then the first rows). */
  def difference(left: Seq[Row], right: Seq[Row], exact: Boolean): Option[String] =
    if (left.size != right.size) Some(s"${left.size} rows against ${right.size}")
    else {
      val differing = left.indices.filterNot(i => rowsEqual(left(i), right(i), exact))
      if (differing.isEmpty) None
      else
        Some(
          s"${differing.size} of ${left.size} rows differ, first " +
            differing.take(Shown).map(i => s"row $i: ${left(i)} against ${right(i)}").mkString("; ")
        )
    }

  private def rowsEqual(a: Row, b: Row, exact: Boolean): Boolean =
    a.length == b.length && (0 until a.length).forall(i => valuesEqual(a.get(i), b.get(i), exact))

  private[tpch] def valuesEqual(a: Any, b: Any, exact: Boolean): Boolean = (a, b) match {
    case (null, null) => true
    case (null, _) | (_, null) => false
    case (x: Double, y: Double) if !exact => close(x, y)
    case (x: Float, y: Float) if !exact => close(x.toDouble, y.toDouble)
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) if !exact => x.compareTo(y) == 0
    case (x: Row, y: Row) => rowsEqual(x, y, exact)
    case (x: scala.collection.Seq[_], y: scala.collection.Seq[_]) =>
      x.size == y.size && x.zip(y).forall { case (u, v) => valuesEqual(u, v, exact) }
    case _ => a == b
  }

  private def close(x: Double, y: Double): Boolean =
    x == y || (x.isNaN && y.isNaN) ||
      math.abs(x - y) <= FloatTolerance * math.max(math.abs(x), math.abs(y))
}
