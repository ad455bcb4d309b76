package dev.quiver.examples

import org.apache.spark.sql.SparkSession

/**
 * The examples of docs/joins.md, kept here so that they compile against Quiver's API alone (this
 * package sees nothing internal) and a test runs them. DocExamplesSuite checks that each region
 * between the markers is, character for character, a code block of the guide.
 */
object JoinsExample {

  /** What the examples computed, for the suite to check. */
  final case class Results(
      unknownCustomers: Long,
      nullAwareAnti: Long,
      broadcastRows: Long,
      innerMatches: Long,
      semiMatches: Long,
      perTaskRows: Long
  )

  def run(spark: SparkSession): Results = {
    // docs/joins.md: begin
    import dev.quiver.spark.join.QuiverJoins
    import org.apache.spark.sql.functions.col

    // The probe side: streamed, one task per partition.
    val orders = spark
      .range(0, 4000, 1, 8)
      .selectExpr(
        "id AS order_id",
        "CASE WHEN id % 50 = 0 THEN NULL ELSE id % 1200 END AS customer_id",
        "CAST(id * 1.5 AS DECIMAL(12, 2)) AS amount"
      )

    // The build side: broadcast whole, any Spark SQL type.
    val customers = spark
      .range(0, 1000)
      .selectExpr(
        "id AS id",
        "concat('customer-', id) AS name",
        "named_struct('city', 'Lyon', 'zip', CAST(69000 + id % 10 AS STRING)) AS address",
        "array(id % 3, id % 5) AS segments"
      )

    // Hash joins: probe keys, build keys (one or more of each), join type.
    val withCustomer =
      QuiverJoins.broadcastHashJoin(orders, customers, Seq("customer_id"), Seq("id"), "left_outer")
    withCustomer.show(5, truncate = false)

    val unknownCustomer =
      QuiverJoins.broadcastHashJoin(orders, customers, Seq("customer_id"), Seq("id"), "left_anti")
    println(unknownCustomer.count()) // orders whose customer is null or not among the 1,000

    // The build side on the left of a right outer join: customer columns first, every order kept.
    QuiverJoins
      .broadcastHashJoin(orders, customers, Seq("customer_id"), Seq("id"), "right_outer")
      .printSchema()

    // NOT IN, with SQL's null semantics.
    QuiverJoins.broadcastNullAwareAntiJoin(orders, customers, "customer_id", "id").count()

    // Nested loop joins: any condition over both sides.
    val bigOrderOfSegment0 =
      orders("customer_id") === customers("id") && orders("amount") > 5900 &&
        customers("segments")(0) === 0
    QuiverJoins.broadcastNestedLoopJoin(orders, customers, bigOrderOfSegment0, "inner").show(5)
    // docs/joins.md: end

    val nullAwareAnti =
      QuiverJoins.broadcastNullAwareAntiJoin(orders, customers, "customer_id", "id").count()

    // docs/joins.md: begin
    import dev.quiver.spark.broadcast.ArrowBroadcast

    val customersBroadcast = ArrowBroadcast.of(customers)
    println(
      s"${customersBroadcast.rows} rows, ${customersBroadcast.bytes} bytes, coalesced from " +
        s"${customersBroadcast.inputBatches} batches: ${customersBroadcast.coalesced}"
    )
    val keys = (Seq("customer_id"), Seq("id"))
    val matches =
      QuiverJoins.broadcastHashJoin(orders, customersBroadcast, keys._1, keys._2, "inner")
    val lower = col("customer_id") < col("id")
    val withHigherId =
      QuiverJoins.broadcastNestedLoopJoin(orders, customersBroadcast, lower, "left_semi")
    val (matchCount, higherIdCount) = (matches.count(), withHigherId.count())
    println(s"$matchCount matches, $higherIdCount orders below some customer's id")
    // docs/joins.md: end

    // docs/joins.md: begin
    import dev.quiver.spark.QuiverSettings

    spark.conf.set(QuiverSettings.ShareDecodedBroadcasts, "false")
    val decodedPerTask =
      QuiverJoins.broadcastHashJoin(orders, customers, Seq("customer_id"), Seq("id"), "inner")
    spark.conf.unset(QuiverSettings.ShareDecodedBroadcasts)
    // docs/joins.md: end

    Results(
      unknownCustomer.count(),
      nullAwareAnti,
      customersBroadcast.rows,
      matchCount,
      higherIdCount,
      decodedPerTask.count()
    )
  }
}
