package dev.quiver.apicheck

import dev.quiver.annotation.{Internal, Public}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.quiver.JavaLists

// Classes that break, or keep, the API's signature rules, for ApiSurfaceSuite to check its checks
// on. Not in any artifact.

@Public
final class CollectionsWithoutJavaForms {
  def names: Seq[String] = Seq.empty
  def count(names: Seq[String]): Int = names.size
  @Internal def quiverOnly: Seq[String] = Seq.empty
}

@Public
final class CollectionsWithJavaForms {
  def names: Seq[String] = Seq.empty
  def namesAsJava: java.util.List[String] = java.util.Collections.emptyList()
  def asMap: Map[String, Int] = Map.empty
  def asJavaMap: java.util.Map[String, Integer] = java.util.Collections.emptyMap()
  def count(names: Seq[String]): Int = names.size
  def count(names: java.util.List[String]): Int = names.size
}

/** Public, but not API. */
final class NotApi

@Public
final class NamesInternals {
  def row: InternalRow = InternalRow.empty
  def lists: JavaLists.type = JavaLists
  def notApi(value: NotApi): NotApi = value
}
