package dev.quiver.apicheck;

import dev.quiver.broadcast.BroadcastReader;
import dev.quiver.spark.ExecutorCacheReport;
import dev.quiver.spark.QuiverMetrics;
import dev.quiver.spark.broadcast.ArrowBroadcast;
import dev.quiver.spark.broadcast.ArrowBroadcastRDD;
import dev.quiver.spark.broadcast.QuiverBroadcasts;
import dev.quiver.spark.join.QuiverJoins;
import dev.quiver.spark.shuffle.QuiverExchange;
import dev.quiver.spark.shuffle.ShufflePartitioning;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.LongAccumulator;

/**
 * The Java forms of the API's members that take or return Scala collections, called from Java:
 * javac compiling this proves that Java reaches each of them without a Scala collection
 * (ApiSurfaceSuite runs the ones that need no Spark).
 */
public final class JavaForms {

  private JavaForms() {}

  /** Hash partitioning made from Java both ways, its keys read back. */
  public static List<String> hashKeys() {
    ShufflePartitioning.Hash made = new ShufflePartitioning.Hash(List.of("region", "customer"), 8);
    ShufflePartitioning.Hash byVarargs = ShufflePartitioning.hash(8, "region", "customer");
    if (!made.equals(byVarargs)) {
      throw new AssertionError(made + " differs from " + byVarargs);
    }
    return byVarargs.keysAsJava();
  }

  public static Map<String, Long> figures(ExecutorCacheReport report) {
    return report.figuresAsJava();
  }

  public static Map<String, ExecutorCacheReport> executorCaches() {
    return QuiverMetrics.executorBroadcastCachesAsJava();
  }

  public static Map<String, SQLMetric> shuffleMetrics(QuiverExchange exchange) {
    return exchange.metrics().asJavaMap();
  }

  public static List<LongAccumulator> readMetrics(ArrowBroadcastRDD rdd) {
    return rdd.readMetrics().allAsJava();
  }

  public static Iterator<ColumnarBatch> batches(BroadcastReader reader) {
    return QuiverBroadcasts.columnarBatchesAsJava(reader);
  }

  public static Dataset<Row> join(Dataset<Row> probe, ArrowBroadcast build) {
    return QuiverJoins.broadcastHashJoin(probe, build, List.of("id"), List.of("id"), "inner");
  }
}
