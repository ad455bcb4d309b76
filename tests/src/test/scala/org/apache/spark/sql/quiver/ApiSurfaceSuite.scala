package org.apache.spark.sql.quiver

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import dev.quiver.annotation.{Internal, Public}
import dev.quiver.apicheck.{
  CollectionsWithJavaForms,
  CollectionsWithoutJavaForms,
  JavaForms,
  NamesInternals,
  NotApi
}
import dev.quiver.spark.{ExecutorCacheReport, QuiverMetrics}
import org.scalatest.funsuite.AnyFunSuite

/** The stated API: what carries `@Public`, what does not, and `docs/api.md`. */
class ApiSurfaceSuite extends AnyFunSuite {

  test("every public class of dev.quiver says whether it is API") {
    assert(ApiSurface.classes.size > 50, s"found only ${ApiSurface.classes.map(_.getName)}")
    assert(ApiSurface.undeclared.isEmpty, "public, but neither @Public nor @Internal")
  }

  test("the facade dev.quiver.spark holds API only") {
    val facade =
      ApiSurface.classes.filter(_.getPackage.getName.startsWith(ApiSurface.FacadePackage))
    val notApi = facade.filterNot(ApiSurface.carries(_, classOf[Public])).map(_.getName)
    assert(facade.nonEmpty)
    assert(notApi.isEmpty, "in the facade without @Public")
  }

  test("nothing under org.apache.spark.sql.quiver is API") {
    val internal = ApiSurface.classes.filter(_.getName.startsWith("org.apache.spark.sql.quiver."))
    assert(internal.nonEmpty)
    val marked = internal.filter(ApiSurface.carries(_, classOf[Public])).map(_.getName)
    assert(marked.isEmpty, "@Public in the internal package")
  }

  test("no class is both @Public and @Internal") {
    val both = ApiSurface.classes
      .filter(c =>
        ApiSurface.carries(c, classOf[Public]) && ApiSurface.carries(c, classOf[Internal])
      )
    assert(both.isEmpty)
  }

  test("docs/api.md lists exactly the @Public classes") {
    val root = sys.props.getOrElse("quiver.repo.root", "..")
    val text =
      new String(Files.readAllBytes(Paths.get(root, "docs", "api.md")), StandardCharsets.UTF_8)
    val listed = "(?m)^\\| `((?:dev\\.quiver)[A-Za-z0-9_.$]+)` \\|".r
      .findAllMatchIn(text)
      .map(_.group(1))
      .toSeq
    assert(listed.distinct == listed, "listed twice")
    val missing = ApiSurface.publicNames.diff(listed)
    val extra = listed.diff(ApiSurface.publicNames).filterNot(ApiSurface.ofAbsentCometAdapter)
    assert(missing.isEmpty && extra.isEmpty, s"docs/api.md: missing $missing, not API $extra")
  }

  test("every API member Java can use has a form without Scala collections") {
    val api = ApiSignatures.ofArtifact
    assert(api.checkedMembers.size > 200, s"checked only ${api.checkedMembers.size} members")
    assert(api.scalaCollectionsWithoutJavaForm.isEmpty, "Scala collections without a Java form")
  }

  test("only a class path without arrow-c-data hides members, and only the C Data export's") {
    val hidden = ApiSignatures.ofArtifact.classesWithoutOptionalDependency.map(_.getName)
    val cDataPresent = scala.util
      .Try {
        Class.forName("org.apache.arrow.c.ArrowArray", false, getClass.getClassLoader)
        true
      }
      .getOrElse(false)
    if (cDataPresent) assert(hidden.isEmpty)
    else assert(hidden == Seq("dev.quiver.broadcast.CDataExport"))
  }

  test("the API names only types users can depend on") {
    val api = ApiSignatures.ofArtifact
    assert(api.typesUsersCannotDependOn.isEmpty)
    val unused = ApiSignatures.SparkInternalsAllowed.filterNot(api.namedByApi)
    assert(unused.isEmpty, "allowed Spark internals the API no longer names: drop them")
  }

  test("the signature checks find what they are for") {
    def check(classes: Class[_]*) = new ApiSignatures(classes)
    val without = classOf[CollectionsWithoutJavaForms].getName
    assert(
      check(classOf[CollectionsWithoutJavaForms]).scalaCollectionsWithoutJavaForm
        .map(_.takeWhile(_ != '('))
        .toSet == Set(s"$without.names", s"$without.count")
    )
    val withForms = check(classOf[CollectionsWithJavaForms])
    assert(withForms.checkedMembers.size == 7, withForms.checkedMembers) // constructor included
    assert(withForms.scalaCollectionsWithoutJavaForm.isEmpty)
    assert(withForms.typesUsersCannotDependOn.isEmpty)
    val named = check(classOf[NamesInternals]).typesUsersCannotDependOn
    assert(
      named.map(_.split(" names ").last).sorted == Seq(
        classOf[NotApi].getName,
        "org.apache.spark.sql.catalyst.InternalRow",
        "org.apache.spark.sql.quiver.JavaLists$"
      )
    )
  }

  test("the Java forms hold what the Scala forms hold") {
    assert(JavaForms.hashKeys() == java.util.List.of("region", "customer"))
    val report =
      new ExecutorCacheReport("7", 3, Map("broadcast.decodes" -> 2L, "allocatedBytes" -> 0L))
    val figures = JavaForms.figures(report)
    assert(figures.keySet().toArray.toSeq == Seq("allocatedBytes", "broadcast.decodes"))
    assert(figures.get("broadcast.decodes") == 2L && report("broadcast.decodes") == 2L)
    // Whatever driver plugin an earlier suite of this JVM left, both forms show the same reports.
    val scalaCaches = QuiverMetrics.executorBroadcastCaches
    val javaCaches = JavaForms.executorCaches()
    assert(javaCaches.keySet().toArray.toSeq == scalaCaches.keys.toSeq.sorted)
    scalaCaches.foreach { case (id, report) => assert(javaCaches.get(id) == report) }
  }
}
