package dev.quiver.bench.tpch

import java.io.File
import java.time.LocalDate

import io.trino.tpch.{TpchColumn, TpchColumnType, TpchEntity, TpchTable}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.quiver.JavaLists
import org.apache.spark.sql.types._

/**
 * TPC-H's eight tables, generated in Spark's tasks by Trino's Java port of dbgen (one generator
 * part per task) and written once as Parquet under `root/<table>`; later runs at the same scale
 * reuse them.
 *
 * Types follow the TPC-H specification rather than the generator's: money, quantities and rates
 * are `decimal(15,2)` (the generator hands them out as doubles of two decimals), keys `bigint`,
 * dates `date`. Exact decimals make every query's answer exact, so settings can be compared
 * without a tolerance wherever the queries do not compute a floating value themselves.
 */
object TpchData {

  /** Decimal columns of the specification: 15 digits, 2 after the point. */
  val Money: DecimalType = DecimalType(15, 2)

  /**
   * Parquet row groups are kept to about this fraction of a split, so that a scan splits into
   * several tasks (Spark assigns a row group to the split holding its midpoint).
   */
  private val RowGroupsPerSplit = 4

  /**
   * The bytes per scan task (`spark.sql.files.maxPartitionBytes`) at `scale`: at scale 1, about
   * 16 MiB, so lineitem's scan runs in a dozen tasks or more and orders' in several, more tasks
   * than cores, as a broadcast's readers are on a real cluster.
   */
  def splitBytes(scale: Double): Long = math.max(256L << 10, (scale * (16L << 20)).toLong)

  /** Writes the tables that `root` does not hold yet; returns each table's folder. */
  def prepare(
      spark: SparkSession,
      scale: Double,
      root: File,
      log: String => Unit
  ): Map[String, File] =
    JavaLists
      .toSeq(TpchTable.getTables)
      .map { table =>
        val dir = new File(root, table.getTableName)
        if (!new File(dir, "_SUCCESS").isFile) {
          val parts = partsOf(table, scale)
          log(s"writing TPC-H ${table.getTableName} at scale $scale in $parts parts to $dir")
          val name = table.getTableName
          val rows = spark.sparkContext
            .parallelize(1 to parts, parts)
            .mapPartitions(_.flatMap(part => generate(name, scale, part, parts)))
          spark
            .createDataFrame(rows, schema(table))
            .write
            .mode("overwrite")
            .option("parquet.block.size", (splitBytes(scale) / RowGroupsPerSplit).toString)
            .parquet(dir.getPath)
        }
        table.getTableName -> dir
      }
      .toMap

  /** The Spark schema of a table: the generator's columns with the specification's types. */
  def schema(table: TpchTable[_]): StructType =
    StructType(JavaLists.toSeq(table.getColumns).map { column =>
      StructField(column.getColumnName, sparkType(column.getType), nullable = false)
    })

  private def sparkType(t: TpchColumnType): DataType = t.getBase match {
    case TpchColumnType.Base.IDENTIFIER => LongType
    case TpchColumnType.Base.INTEGER => IntegerType
    case TpchColumnType.Base.DATE => DateType
    case TpchColumnType.Base.DOUBLE => Money
    case TpchColumnType.Base.VARCHAR => StringType
  }

  /** Nation and region are fixed lists the generator does not split; the others split by scale. */
  private def partsOf(table: TpchTable[_], scale: Double): Int =
    if (table == TpchTable.NATION || table == TpchTable.REGION) 1
    else math.max(2, math.ceil(scale * 8).toInt)

  /** One part's rows, made in the task: the generator's classes are not serializable. */
  private def generate(tableName: String, scale: Double, part: Int, parts: Int): Iterator[Row] = {
    val table = TpchTable.getTable(tableName).asInstanceOf[TpchTable[TpchEntity]]
    val columns = JavaLists.toSeq(table.getColumns).toIndexedSeq
    val entities = table.createGenerator(scale, part, parts).iterator()
    new Iterator[Row] {
      override def hasNext: Boolean = entities.hasNext
      override def next(): Row = {
        val entity = entities.next()
        Row.fromSeq(columns.map(value(_, entity)))
      }
    }
  }

  private def value(column: TpchColumn[TpchEntity], entity: TpchEntity): Any =
    column.getType.getBase match {
      case TpchColumnType.Base.IDENTIFIER => column.getIdentifier(entity)
      case TpchColumnType.Base.INTEGER => column.getInteger(entity)
      case TpchColumnType.Base.DATE =>
        java.sql.Date.valueOf(LocalDate.ofEpochDay(column.getDate(entity).toLong))
      case TpchColumnType.Base.DOUBLE =>
        // The generator's doubles carry two decimals exactly as dbgen prints them.
        java.math.BigDecimal
          .valueOf(column.getDouble(entity))
          .setScale(2, java.math.RoundingMode.HALF_UP)
      case TpchColumnType.Base.VARCHAR => column.getString(entity)
    }
}
