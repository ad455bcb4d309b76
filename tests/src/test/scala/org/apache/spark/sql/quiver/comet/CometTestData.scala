package org.apache.spark.sql.quiver.comet

import java.io.File

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._
import org.scalatest.Assertions

/**
 * The files Apache DataFusion Comet 1.2.0 wrote on Spark 4.1.3 (`shared/testdata/comet-1.2.0`,
 * beside the repository), and the rows Spark computes for them.
 */
object CometTestData extends Assertions {

  /** The folder, or `None` where the shared test data is not beside the repository. */
  lazy val folder: Option[File] = {
    val root = new File(sys.props.getOrElse("quiver.repo.root", ".")).getAbsoluteFile
    Seq(
      new File(root, "../shared/testdata/comet-1.2.0"),
      new File(root, "shared/testdata/comet-1.2.0")
    )
      .find(_.isDirectory)
  }

  /** Cancels the calling test when the files are missing. */
  def require(): File = {
    assume(folder.isDefined, "shared/testdata/comet-1.2.0 is not beside the repository")
    folder.get
  }

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
      .json(new File(require(), "dim-rows.json.gz").getPath)
      .collect()
      .toSeq
}
