package dev.quiver.releasecheck

import dev.quiver.spark.QuiverSettings
import dev.quiver.spark.join.QuiverJoins
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.broadcast

/**
 * A Scala application built against a published Quiver bundle: Quiver's left outer and left anti
 * broadcast hash joins on a local Spark, each checked against Spark's own broadcast join of the
 * same tables. Exits with status 1 when one differs.
 */
object ScalaConsumer {

  def main(args: Array[String]): Unit = {
    val spark = SparkSession
      .builder()
      .master("local[2]")
      .appName("quiver-release-check-scala")
      .config("spark.ui.enabled", "false")
      .config("spark.plugins", QuiverSettings.Plugin)
      .config(QuiverSettings.ShareDecodedBroadcasts, "true")
      .getOrCreate()
    try {
      val orders = spark
        .range(0, 5000, 1, 4)
        .selectExpr("id AS order_id", "CASE WHEN id % 40 = 0 THEN NULL ELSE id % 700 END AS cid")
      val customers = spark
        .range(0, 500)
        .selectExpr("id AS id", "concat('customer-', id) AS name", "array(id % 3, id % 5) AS seg")

      val results = Seq("left_outer", "left_anti").map { joinType =>
        val quiver = QuiverJoins.broadcastHashJoin(orders, customers, Seq("cid"), Seq("id"), joinType)
        val expected = orders.join(broadcast(customers), orders("cid") === customers("id"), joinType)
        val rows = quiver.count()
        val same = rows == expected.count() &&
          quiver.exceptAll(expected).isEmpty && expected.exceptAll(quiver).isEmpty
        println(
          s"release-check scala: Spark ${spark.version}, $joinType join of $rows rows, " +
            (if (same) "the same as Spark's own" else "DIFFERENT from Spark's own")
        )
        same
      }
      if (!results.forall(identity)) sys.exit(1)
    } finally {
      spark.stop()
    }
  }
}
