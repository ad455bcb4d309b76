package dev.quiver.bench.tpch

import java.nio.charset.StandardCharsets

import org.apache.spark.SPARK_VERSION

/**
 * TPC-H's 22 queries as Spark's own test jar carries them (`tpch/q1.sql` to `tpch/q22.sql` in
 * `spark-sql_2.13:<version>:tests`, the default profile's test class path), read at run time.
 */
object TpchQueries {

  final case class Query(name: String, sql: String)

  val Names: Seq[String] = (1 to 22).map(n => s"q$n")

  def all: Seq[Query] = Names.map(load)

  def load(name: String): Query = {
    val resource = s"tpch/$name.sql"
    val in = Option(getClass.getClassLoader.getResourceAsStream(resource)).getOrElse {
      throw new IllegalStateException(
        s"no $resource on the class path: TPC-H's queries come from Spark's test jar " +
          s"(org.apache.spark:spark-sql_2.13:$SPARK_VERSION:tests), a test dependency of the " +
          "default profile's build, which dev/bench runs"
      )
    }
    try Query(name, new String(in.readAllBytes(), StandardCharsets.UTF_8))
    finally in.close()
  }
}
