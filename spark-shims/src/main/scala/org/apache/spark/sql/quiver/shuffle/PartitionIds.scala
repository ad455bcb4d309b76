package org.apache.spark.sql.quiver.shuffle

import org.apache.spark.Partitioner

/** The map side keys each block by its reduce partition already: the key is the partition. */
private[quiver] class PartitionIds(override val numPartitions: Int) extends Partitioner {

  override def getPartition(key: Any): Int = key.asInstanceOf[Int]

  override def equals(other: Any): Boolean = other match {
    case p: PartitionIds => p.numPartitions == numPartitions
    case _ => false
  }

  override def hashCode(): Int = numPartitions
}
