package org.apache.spark.sql.quiver.comet

import dev.quiver.testing.CometFiles
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._

/**
 * The files Apache DataFusion Comet 1.2.0 wrote on Spark 4.1.3 (common's test resources, found
 * through [[CometFiles]] in common's test jar), and the rows Spark computes for them.
 */
object CometTestData {

  /** `dim` as the README describes it; Comet's own files name no fields, so match by position. */
  val dimSchema: StructType = StructType(
    Seq(
      StructField("k", LongType),
      StructField("b", BooleanType),
      StructField("i", IntegerType),
      StructField("s", StringType),
      StructField("bin", BinaryType),
      StructField("dec", DecimalType(10, 2)),
      StructField("dt", DateType),
      StructField("ts", TimestampType),
      StructField(
        "st",
        StructType(Seq(StructField("x", IntegerType), StructField("y", StringType)))
      ),
      StructField("arr", ArrayType(IntegerType)),
      StructField("m", MapType(StringType, IntegerType))
    )
  )

  /** Every row of `dim` as Spark computed it. */
  def dimRows(spark: SparkSession): Seq[Row] =
    spark.read
      .schema(dimSchema)
      .json(CometFiles.dimRows().toString)
      .collect()
      .toSeq
}
