package org.apache.spark.sql.quiver

import org.scalatest.funsuite.AnyFunSuite

/**
 * Retention on a real Spark (`local[1]`, retention on, in a JVM of its own: see
 * [[RetainingExecutor]]): a broadcast read by sequential tasks and jobs decodes once, its bytes
 * are in Spark's storage memory, and destroying it frees both.
 */
class RetentionSuite extends AnyFunSuite {

  private def result(key: String): String =
    RetainingExecutor.results.getOrElse(key, fail(s"no $key in ${RetainingExecutor.results}"))

  test("sixteen reads by tasks that never overlap decode once") {
    assert(result("rows") == (2 * 8 * 2000).toString)
    assert(result("decodes") == "1")
    assert(result("retainedReads") == "15")
    assert(result("entriesRetained") == "1")
    // Per task: the first decoded, every later one read the retained decode.
    assert(result("readsDecoded") == "1")
    assert(result("readsRetained") == "15")
    assert(result("readsSharedOrPrivate") == "0")
  }

  test("a retained broadcast's bytes are taken from Spark's storage memory") {
    val retained = result("bytesRetained").toLong
    assert(retained > 2000 * 8)
    assert(result("storageTaken").toLong == retained)
  }

  test("the cache's metrics are in Spark's metrics system") {
    assert(result("metricDecodes") == "1")
  }

  test("a join builds its build side once, for every task of every query, retained beside it") {
    // Probe keys below 2000 match one dim row each; two queries.
    assert(result("joinRows") == (2 * (0 until 4000).count(_ % 2500 < 2000)).toString)
    assert(result("joinDecodes") == "1")
    assert(result("joinBuilds") == "1")
    assert(result("joinReuses") == (2 * (8 + 1) - 1).toString)
    val withBuild = result("bytesRetainedWithBuild").toLong
    assert(withBuild > result("bytesRetained").toLong)
    assert(result("storageTakenWithBuild").toLong == withBuild)
  }

  test("destroying a broadcast frees its retained entry and storage memory at the next task") {
    assert(result("otherRows") == (8 * 10).toString)
    assert(result("destroyedKept") == "false")
    assert(result("droppedEvictions").toLong >= 1)
    assert(result("entriesAtEnd") == "0")
    assert(result("storageAtEnd") == "0")
  }
}
