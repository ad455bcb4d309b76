package org.apache.spark.sql.quiver.join

import dev.quiver.spark.broadcast.ArrowBroadcast
import org.apache.spark.sql.catalyst.analysis.MultiInstanceRelation
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.{LeafNode, LogicalPlan, Statistics}

/**
 * A broadcast of Arrow streams as a relation of Spark's logical plans: the build side of Quiver's
 * joins. The optimizer sees its row count and compressed size, prunes and filters above it, and
 * [[SharedBuildStrategy]] plans a join over it as Spark's own broadcast join whose build side is
 * derived once per executor from the decoded broadcast.
 *
 * @param shareDecoded the session's sharing setting when the join was called, which its plan keeps
 */
final private[quiver] case class QuiverBroadcastRelation(
    broadcast: ArrowBroadcast,
    output: Seq[Attribute],
    shareDecoded: Boolean
) extends LeafNode
    with MultiInstanceRelation {

  override def newInstance(): LogicalPlan = copy(output = output.map(_.newInstance()))

  override def maxRows: Option[Long] = Some(broadcast.rows)

  override def computeStats(): Statistics = Statistics(sizeInBytes = BigInt(broadcast.bytes))

  override def simpleString(maxFields: Int): String =
    s"QuiverBroadcast ${broadcast.value.id} ${output.mkString("[", ", ", "]")}" +
      (if (shareDecoded) "" else ", per task")
}

private[quiver] object QuiverBroadcastRelation {

  def apply(broadcast: ArrowBroadcast, shareDecoded: Boolean): QuiverBroadcastRelation =
    QuiverBroadcastRelation(
      broadcast,
      broadcast.schema.fields.toSeq.map { f =>
        AttributeReference(f.name, f.dataType, f.nullable, f.metadata)()
      },
      shareDecoded
    )
}
