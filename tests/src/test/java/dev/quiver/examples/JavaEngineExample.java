package dev.quiver.examples;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.spark.broadcast.ArrowBroadcast;
import dev.quiver.spark.broadcast.BroadcastStreams;
import dev.quiver.spark.broadcast.QuiverBroadcasts;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;

/**
 * The Java example of docs/engines.md, compiled by javac against Quiver's API alone: an engine's
 * task reads a broadcast through the executor's cache as plain Arrow vectors.
 */
public final class JavaEngineExample {

  private JavaEngineExample() {}

  /** The sum of the broadcast's keys, as each of four tasks read it. */
  public static List<Long> run(SparkSession spark) {
    ArrowBroadcast customers = ArrowBroadcast.of(spark.range(0, 1000).selectExpr("id AS id"));
    JavaSparkContext context = JavaSparkContext.fromSparkContext(spark.sparkContext());
    // docs/engines.md: begin
    Broadcast<byte[][]> buildSide = customers.value();
    List<Long> keySums =
        context
            .parallelize(List.of(0, 1, 2, 3), 4)
            .mapPartitions(
                ignored -> {
                  BroadcastReader reader =
                      QuiverBroadcasts.open(buildSide, BroadcastStreams.byteArrays(), true);
                  long sum = 0;
                  while (reader.next()) {
                    // The batch as plain Arrow: a view of the task's own, closed at next().
                    VectorSchemaRoot view = reader.current();
                    BigIntVector ids = (BigIntVector) view.getVector("id");
                    for (int i = 0; i < view.getRowCount(); i++) {
                      sum += ids.get(i);
                    }
                  }
                  return List.of(sum).iterator();
                })
            .collect();
    // docs/engines.md: end
    customers.value().destroy();
    return keySums;
  }
}
