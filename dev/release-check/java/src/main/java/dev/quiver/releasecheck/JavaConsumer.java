package dev.quiver.releasecheck;

import static org.apache.spark.sql.functions.broadcast;

import dev.quiver.spark.QuiverSettings;
import dev.quiver.spark.join.QuiverJoins;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A Java application built against a published Quiver bundle: joins two tables with Quiver's
 * broadcast hash join on a local Spark and checks that the rows are those of Spark's own broadcast
 * join. Exits with status 1 when they differ.
 */
public final class JavaConsumer {

  private JavaConsumer() {}

  public static void main(String[] args) {
    SparkSession spark =
        SparkSession.builder()
            .master("local[2]")
            .appName("quiver-release-check-java")
            .config("spark.ui.enabled", "false")
            .config("spark.plugins", QuiverSettings.Plugin())
            .config(QuiverSettings.ShareDecodedBroadcasts(), "true")
            .getOrCreate();
    try {
      Dataset<Row> orders =
          spark
              .range(0, 5000, 1, 4)
              .selectExpr(
                  "id AS order_id",
                  "CASE WHEN id % 40 = 0 THEN NULL ELSE id % 700 END AS customer_id",
                  "CAST(id * 1.5 AS DECIMAL(12, 2)) AS amount");
      Dataset<Row> customers =
          spark.range(0, 500).selectExpr("id AS id", "concat('customer-', id) AS name");

      Dataset<Row> quiver =
          QuiverJoins.broadcastHashJoin(
              orders, customers, List.of("customer_id"), List.of("id"), "inner");
      Dataset<Row> expected =
          orders.join(
              broadcast(customers), orders.col("customer_id").equalTo(customers.col("id")), "inner");

      long rows = quiver.count();
      boolean same =
          rows == expected.count()
              && quiver.exceptAll(expected).isEmpty()
              && expected.exceptAll(quiver).isEmpty();
      System.out.println(
          "release-check java: Spark "
              + spark.version()
              + ", inner join of "
              + rows
              + " rows, "
              + (same ? "the same as Spark's own" : "DIFFERENT from Spark's own"));
      if (!same) {
        System.exit(1);
      }
    } finally {
      spark.stop();
    }
  }
}
