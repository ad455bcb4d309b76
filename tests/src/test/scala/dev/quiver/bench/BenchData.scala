package dev.quiver.bench

import java.io.File

import org.apache.spark.sql.SparkSession

/**
 * The benchmark's tables, written once as Parquet and reused by later runs: `fact` (one file per
 * probe task) and `dim` (unique keys). Every fact key is a dim key, so the inner join keeps every
 * fact row.
 */
object BenchData {

  final case class Tables(fact: File, dim: File)

  def prepare(spark: SparkSession, shape: Shape, root: File, log: String => Unit): Tables = {
    val dim = new File(root, s"dim-${shape.buildRows}")
    val fact =
      new File(root, s"fact-${shape.probeTasks}x${shape.rowsPerFile}-keys${shape.buildRows}")
    if (!done(dim)) {
      log(s"writing dim: ${shape.buildRows} rows to $dim")
      spark
        .range(0, shape.buildRows.toLong, 1, 4)
        .selectExpr("id AS k", "id * 3 AS d_long", "concat('dim-value-', id) AS d_str")
        .write
        .mode("overwrite")
        .parquet(dim.getPath)
    }
    if (!done(fact)) {
      val rows = shape.probeTasks.toLong * shape.rowsPerFile
      log(s"writing fact: $rows rows in ${shape.probeTasks} files to $fact")
      spark
        .range(0, rows, 1, shape.probeTasks)
        .selectExpr(
          s"pmod(xxhash64(id), ${shape.buildRows}) AS key",
          "id AS f_long",
          "id * 0.5 AS f_double",
          "concat('fact-row-', id) AS f_str"
        )
        .write
        .mode("overwrite")
        .parquet(fact.getPath)
    }
    Tables(fact, dim)
  }

  private def done(dir: File): Boolean = new File(dir, "_SUCCESS").isFile
}
