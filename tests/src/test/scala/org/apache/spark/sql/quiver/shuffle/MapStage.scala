package org.apache.spark.sql.quiver.shuffle

import org.apache.spark.{MapOutputStatistics, ShuffleDependency, SparkContext}

/** Runs a shuffle's map side on its own (Spark's `submitMapStage` is Spark-private). */
object MapStage {

  /** Writes `dependency`'s map outputs and returns their sizes by reduce partition. */
  def run(sc: SparkContext, dependency: ShuffleDependency[_, _, _]): MapOutputStatistics =
    sc.submitMapStage(dependency).get()
}
