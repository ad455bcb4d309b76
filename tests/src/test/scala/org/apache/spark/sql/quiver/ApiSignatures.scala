package org.apache.spark.sql.quiver

import java.lang.reflect.{
  Constructor,
  Executable,
  Field,
  GenericArrayType,
  Member,
  Method,
  Modifier,
  ParameterizedType,
  Type,
  TypeVariable,
  WildcardType
}

import dev.quiver.annotation.{Internal, Public}

/**
 * The API's signatures as Java sees them, checked against the rules of `docs/api.md`, "Java and
 * the API's signatures": no Scala collection without a Java form beside it, and no type a user
 * cannot depend on.
 *
 * @param topLevel top-level classes; those carrying [[Public]] (or whose Scala companion does) are
 *   checked, with the public classes nested in them
 */
final class ApiSignatures(topLevel: Seq[Class[_]]) {

  import ApiSignatures._

  /** The @Public classes, the public classes nested in them, and Scala objects' classes. */
  lazy val apiClasses: Seq[Class[_]] = {
    def withNested(c: Class[_]): Seq[Class[_]] =
      c +: c.getDeclaredClasses.toSeq
        .filter(n => Modifier.isPublic(n.getModifiers) && !n.isSynthetic)
        .flatMap(withNested)
    topLevel
      .filter(c => Modifier.isPublic(c.getModifiers) && ApiSurface.carries(c, classOf[Public]))
      .flatMap(withNested)
      .distinct
  }

  /**
   * The API's classes whose members this JVM cannot see: those naming the types of an optional
   * dependency its class path lacks. Only `arrow-c-data` is one (the C Data export names its
   * structs); it is on the default profile's test class path, inside Comet's jar, and on no other,
   * so the export's members are checked there: the API is the same source on every profile.
   */
  lazy val classesWithoutOptionalDependency: Seq[Class[_]] =
    apiClasses.filter(c => declaredMembers(c).isEmpty)

  private def declaredMembers(c: Class[_]): Option[Seq[Member]] =
    try
      Some(
        c.getDeclaredConstructors.toSeq ++ c.getDeclaredMethods.toSeq ++ c.getDeclaredFields.toSeq
      )
    catch {
      case missing: NoClassDefFoundError
          if Option(missing.getMessage).exists(_.startsWith("org/apache/arrow/c/")) =>
        None
    }

  /** The members Java can use on the API's classes, minus those the rules leave out. */
  lazy val checkedMembers: Seq[Member] = apiClasses.flatMap { c =>
    declaredMembers(c).getOrElse(Nil).filter(m => isUsable(c, m) && !leftOut(c, m))
  }

  /** Members naming a `scala.collection` type that have no Java form beside them. */
  lazy val scalaCollectionsWithoutJavaForm: Seq[String] = checkedMembers
    .filter(namesScalaCollection)
    .filterNot(hasJavaForm)
    .map(describe)

  /** Members and classes whose signatures name a type that users cannot depend on. */
  lazy val typesUsersCannotDependOn: Seq[String] = {
    val inMembers = for {
      member <- checkedMembers
      named <- namedClasses(member)
      if !dependable(named)
    } yield s"${describe(member)} names ${named.getName}"
    val inSupertypes = for {
      c <- apiClasses
      named <- supertypesNamed(c)
      if !dependable(named)
    } yield s"${c.getName} extends ${named.getName}"
    (inMembers ++ inSupertypes).distinct
  }

  /** Every class the checked signatures and the API classes' supertypes name. */
  lazy val namedByApi: Set[String] =
    (checkedMembers.flatMap(namedClasses) ++ apiClasses.flatMap(supertypesNamed))
      .map(_.getName)
      .toSet

  /**
   * A member naming a Scala collection is usable from Java when its class also has the Java form,
   * whose signature names no Scala collection: for one that takes a collection, an overload of the
   * same name and arity; for one that returns a collection (and takes none), a method with the same
   * parameters named with `AsJava` appended (or, for a name starting with `as`, `Java` after it).
   */
  private def hasJavaForm(m: Member): Boolean = {
    val javaForms = checkedMembers.filter(other =>
      other.getDeclaringClass == m.getDeclaringClass && other != m && !namesScalaCollection(other)
    )
    m match {
      case e: Executable
          if e.getGenericParameterTypes.exists(t => classesIn(t).exists(isScalaCollection)) =>
        javaForms.exists {
          case other: Executable =>
            other.getClass == e.getClass && other.getName == e.getName &&
            other.getParameterCount == e.getParameterCount
          case _ => false
        }
      case method: Method =>
        val name = method.getName
        val javaNames =
          Set(name + "AsJava") ++ (if (name.startsWith("as")) Set("asJava" + name.drop(2))
                                   else Set.empty)
        javaForms.exists {
          case other: Method =>
            javaNames(other.getName) &&
            other.getParameterTypes.sameElements(method.getParameterTypes)
          case _ => false
        }
      case _ => false
    }
  }
}

object ApiSignatures {

  /** The artifact's API. */
  lazy val ofArtifact: ApiSignatures = new ApiSignatures(ApiSurface.classes)

  /**
   * Spark types in Spark's internal packages that are the only way to do what the API does, for
   * the reasons `docs/api.md` gives.
   */
  val SparkInternalsAllowed: Set[String] = Set(
    "org.apache.spark.sql.execution.metric.SQLMetric",
    "org.apache.spark.util.io.ChunkedByteBuffer"
  )

  /** Spark's packages of internals, and Quiver's own internal package under Spark's. */
  val InternalPackages: Seq[String] = Seq(
    "org.apache.spark.internal.",
    "org.apache.spark.sql.catalyst.",
    "org.apache.spark.sql.execution.",
    "org.apache.spark.sql.internal.",
    "org.apache.spark.util.io.",
    "org.apache.spark.sql.quiver."
  )

  /** Whether users may depend on `c`, which an API signature names: see `docs/api.md`. */
  def dependable(c: Class[_]): Boolean = {
    val name = c.getName
    val public = Modifier.isPublic(c.getModifiers)
    if (c.isPrimitive) true
    else if (name.startsWith("dev.quiver.")) isApi(c)
    else if (name.startsWith("java.") || name.startsWith("javax.")) public
    else if (name.startsWith("org.apache.arrow.")) public
    else if (name.startsWith("org.apache.spark.")) {
      public && (SparkInternalsAllowed(name) || !InternalPackages.exists(name.startsWith))
    } else if (name.startsWith("scala.")) public // collections: see hasJavaForm
    else false
  }

  def isScalaCollection(c: Class[_]): Boolean = c.getName.startsWith("scala.collection.")

  /** The classes a type names: itself, its type arguments and their bounds, array elements. */
  def classesIn(t: Type): Seq[Class[_]] = t match {
    case c: Class[_] if c.isArray => classesIn(c.getComponentType)
    case c: Class[_] => Seq(c)
    case p: ParameterizedType =>
      classesIn(p.getRawType) ++ p.getActualTypeArguments.toSeq.flatMap(classesIn)
    case g: GenericArrayType => classesIn(g.getGenericComponentType)
    case w: WildcardType => (w.getUpperBounds.toSeq ++ w.getLowerBounds.toSeq).flatMap(classesIn)
    // A type variable's bounds are checked where it is declared.
    case _: TypeVariable[_] => Seq.empty
    case _ => Seq.empty
  }

  def describe(m: Member): String = m match {
    case e: Executable =>
      val name = if (e.isInstanceOf[Constructor[_]]) "<init>" else e.getName
      val parameters = e.getGenericParameterTypes.map(_.getTypeName).mkString(", ")
      s"${e.getDeclaringClass.getName}.$name($parameters)"
    case f: Field => s"${f.getDeclaringClass.getName}.${f.getName}"
    case other => other.toString
  }

  /** A Quiver class that is API: public, as are the classes it is nested in, and @Public. */
  private def isApi(c: Class[_]): Boolean = {
    val enclosing = enclosingChain(c)
    enclosing.forall(n => Modifier.isPublic(n.getModifiers)) &&
    enclosing.exists(ApiSurface.carries(_, classOf[Public]))
  }

  /** `c`, then the class it is nested in, and so on out to a top-level class. */
  private def enclosingChain(c: Class[_]): Seq[Class[_]] =
    Option(c.getEnclosingClass) match {
      case Some(outer) => c +: enclosingChain(outer)
      case None => Seq(c)
    }

  private def isUsable(owner: Class[_], m: Member): Boolean = {
    val synthetic = m match {
      case method: Method => method.isSynthetic || method.isBridge
      case other => other.isSynthetic
    }
    // A Scala object's instance comes from MODULE$, never from its constructor.
    val objectConstructor = owner.getName.endsWith("$") && m.isInstanceOf[Constructor[_]]
    Modifier.isPublic(m.getModifiers) && !synthetic && !objectConstructor
  }

  /**
   * The members the rules leave out: Scala's generated names (default arguments, the module
   * field), members marked @Internal, and members whose signature a supertype outside Quiver fixed.
   */
  private def leftOut(owner: Class[_], m: Member): Boolean =
    m.getName.contains("$") || markedInternal(m) || overridesForeign(owner, m)

  private def markedInternal(m: Member): Boolean = m match {
    case e: Executable => e.isAnnotationPresent(classOf[Internal])
    case _ => false
  }

  private def overridesForeign(owner: Class[_], m: Member): Boolean = m match {
    case method: Method =>
      supertypes(owner)
        .filterNot(_.getName.startsWith("dev.quiver."))
        .exists(s =>
          s.getDeclaredMethods.exists(found =>
            found.getName == method.getName &&
              found.getParameterTypes.sameElements(method.getParameterTypes)
          )
        )
    case _ => false
  }

  private def supertypes(c: Class[_]): Seq[Class[_]] = {
    val direct = Option(c.getSuperclass).toSeq ++ c.getInterfaces.toSeq
    direct ++ direct.flatMap(supertypes)
  }

  /** What a class's declaration names: its supertypes and its type parameters' bounds. */
  private def supertypesNamed(c: Class[_]): Seq[Class[_]] =
    (Option(c.getGenericSuperclass).toSeq ++ c.getGenericInterfaces.toSeq ++
      c.getTypeParameters.toSeq.flatMap(_.getBounds.toSeq)).flatMap(classesIn)

  private def genericTypes(m: Member): Seq[Type] = m match {
    case e: Executable =>
      val returned = e match {
        case method: Method => Seq(method.getGenericReturnType)
        case _ => Seq.empty
      }
      returned ++ e.getGenericParameterTypes.toSeq ++ e.getGenericExceptionTypes.toSeq ++
        e.getTypeParameters.toSeq.flatMap(_.getBounds.toSeq)
    case field: Field => Seq(field.getGenericType)
    case _ => Seq.empty
  }

  private def namedClasses(m: Member): Seq[Class[_]] =
    genericTypes(m).flatMap(classesIn).distinct

  private def namesScalaCollection(m: Member): Boolean = namedClasses(m).exists(isScalaCollection)
}
