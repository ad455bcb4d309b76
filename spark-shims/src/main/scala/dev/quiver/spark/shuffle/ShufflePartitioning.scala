package dev.quiver.spark.shuffle

import dev.quiver.annotation.Public
import org.apache.spark.sql.quiver.JavaLists

/** How a [[QuiverExchange]] assigns rows to its reduce partitions. */
@Public
sealed trait ShufflePartitioning extends Serializable {

  def numPartitions: Int
}

object ShufflePartitioning {

  /**
   * By Spark's hash of the named top-level columns (`Murmur3Hash` with seed 42, then `pmod` by the
   * number of partitions): each row goes to the partition `df.repartition(numPartitions, keys)`
   * puts it in, so the exchange's output can be co-partitioned with Spark's own.
   */
  final class Hash(val keys: Seq[String], val numPartitions: Int) extends ShufflePartitioning {
    require(keys.nonEmpty, "hash partitioning needs at least one key column")
    require(numPartitions > 0, s"numPartitions must be positive, got $numPartitions")

    /** For callers in Java. */
    def this(keys: java.util.List[String], numPartitions: Int) =
      this(JavaLists.toSeq(keys), numPartitions)

    /** [[keys]] for callers in Java: unmodifiable. */
    def keysAsJava: java.util.List[String] =
      java.util.Collections.unmodifiableList(java.util.Arrays.asList(keys: _*))

    override def equals(other: Any): Boolean = other match {
      case that: Hash => keys == that.keys && numPartitions == that.numPartitions
      case _ => false
    }

    override def hashCode: Int = (keys, numPartitions).##

    override def toString: String = s"Hash(${keys.mkString(", ")}, $numPartitions)"
  }

  object Hash {

    def apply(keys: Seq[String], numPartitions: Int): Hash = new Hash(keys, numPartitions)

    /** [[apply]] for callers in Java. */
    def apply(keys: java.util.List[String], numPartitions: Int): Hash =
      new Hash(keys, numPartitions)
  }

  /**
   * Rows dealt to the partitions in turn, each map task starting at its own partition. Which row
   * lands where depends on the order of the rows in each input partition, so the input must
   * produce its rows in the same order when a map task is retried.
   */
  final case class RoundRobin(numPartitions: Int) extends ShufflePartitioning {
    require(numPartitions > 0, s"numPartitions must be positive, got $numPartitions")
  }

  /** Every row to one partition. */
  case object Single extends ShufflePartitioning {
    override val numPartitions: Int = 1
  }

  /** [[Hash]] partitioning by one or more key columns (callable from Java as varargs). */
  @scala.annotation.varargs
  def hash(numPartitions: Int, key: String, moreKeys: String*): Hash =
    Hash(key +: moreKeys.toList, numPartitions)
}
