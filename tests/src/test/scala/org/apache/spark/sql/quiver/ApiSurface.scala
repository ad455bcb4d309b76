package org.apache.spark.sql.quiver

import java.io.File
import java.lang.reflect.Modifier
import java.nio.file.{Files, Path}
import java.util.jar.JarFile

import scala.collection.mutable

import dev.quiver.annotation.{Internal, Public}
import dev.quiver.spark.QuiverPlugin
import org.apache.spark.sql.quiver.shim.SparkShims

/**
 * Quiver's classes as the artifact on the test class path holds them (class directories in a
 * reactor build, the shaded jar after packaging), and which of them carry [[Public]].
 */
object ApiSurface {

  /** The facade: everything in it is API. */
  val FacadePackage = "dev.quiver.spark"

  /** The Comet adapter's API class: on the class path of the builds that have Comet's jar. */
  val CometAdapter = "dev.quiver.comet.QuiverCometExtensions"

  /** Whether `name` is the Comet adapter's, in a build without it. */
  def ofAbsentCometAdapter(name: String): Boolean =
    name.startsWith("dev.quiver.comet.") && loadable(CometAdapter).isEmpty

  /**
   * Top-level classes under `dev.quiver` and `org.apache.spark.sql.quiver`, by name: the artifact's,
   * and the Comet adapter's where it is on the class path.
   */
  lazy val classes: Seq[Class[_]] = {
    val roots = (Seq(classOf[Public], classOf[QuiverPlugin], SparkShims.get.getClass) ++
      loadable(CometAdapter))
      .map(c => new File(c.getProtectionDomain.getCodeSource.getLocation.toURI))
      .distinct
    val names = mutable.SortedSet[String]()
    roots.foreach(root => names ++= classNames(root))
    names.toSeq
      .filter(n => n.startsWith("dev.quiver.") || n.startsWith("org.apache.spark.sql.quiver."))
      .map(n => Class.forName(n, false, getClass.getClassLoader))
      .filter(c => !c.isSynthetic && !c.isAnonymousClass && c.getEnclosingClass == null)
  }

  /** Whether `c` or its Scala companion's class carries `annotation`. */
  def carries(c: Class[_], annotation: Class[_ <: java.lang.annotation.Annotation]): Boolean = {
    val companion = if (c.getName.endsWith("$")) c.getName.stripSuffix("$") else c.getName + "$"
    c.isAnnotationPresent(annotation) || loadable(companion).exists(
      _.isAnnotationPresent(annotation)
    )
  }

  /** The API: every class that carries [[Public]], a Scala object and its class counted once. */
  lazy val publicNames: Seq[String] =
    classes.filter(carries(_, classOf[Public])).map(_.getName.stripSuffix("$")).distinct.sorted

  /** Public classes of `dev.quiver` that are neither [[Public]] nor [[Internal]]. */
  lazy val undeclared: Seq[String] = classes
    .filter(c => c.getName.startsWith("dev.quiver.") && Modifier.isPublic(c.getModifiers))
    .filterNot(c => carries(c, classOf[Public]) || carries(c, classOf[Internal]))
    .map(_.getName)

  def isPublicApi(className: String): Boolean = publicNames.contains(className)

  private def loadable(name: String): Option[Class[_]] =
    try Some(Class.forName(name, false, getClass.getClassLoader))
    catch { case _: ClassNotFoundException => None }

  private def classNames(root: File): Seq[String] =
    if (root.isDirectory) {
      val base = root.toPath
      val stream = Files.walk(base)
      try {
        val files = Seq.newBuilder[Path]
        stream.forEach(p => if (p.toString.endsWith(".class")) files += p)
        files
          .result()
          .map(p => toName(base.relativize(p).toString.replace(File.separatorChar, '/')))
      } finally stream.close()
    } else {
      val jar = new JarFile(root)
      try {
        val names = Seq.newBuilder[String]
        val entries = jar.entries()
        while (entries.hasMoreElements) {
          val name = entries.nextElement().getName
          if (name.endsWith(".class") && !name.startsWith("META-INF/")) names += toName(name)
        }
        names.result()
      } finally jar.close()
    }

  private def toName(path: String): String = path.stripSuffix(".class").replace('/', '.')
}
