package dev.quiver.examples;

import dev.quiver.spark.join.QuiverJoins;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Java example of docs/joins.md, compiled by javac against Quiver's API alone: it shows that
 * the facade's Java overloads are callable from Java as the guide says.
 */
public final class JavaJoinExample {

  private JavaJoinExample() {}

  /** The inner join of the guide's orders and customers, counted. */
  public static long run(SparkSession spark) {
    Dataset<Row> orders =
        spark.range(0, 1000, 1, 4).selectExpr("id AS order_id", "id % 120 AS customer_id");
    Dataset<Row> customers =
        spark.range(0, 100).selectExpr("id AS id", "concat('customer-', id) AS name");
    // docs/joins.md: begin
    Dataset<Row> joined =
        QuiverJoins.broadcastHashJoin(
            orders, customers, List.of("customer_id"), List.of("id"), "inner");
    // docs/joins.md: end
    return joined.count();
  }
}
