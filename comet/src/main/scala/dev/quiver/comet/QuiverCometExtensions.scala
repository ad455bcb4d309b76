package dev.quiver.comet

import dev.quiver.annotation.Public
import org.apache.comet.CometSparkSessionExtensions
import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.comet.quiver.ReadCometBroadcastsThroughQuiver

/**
 * Comet 1.2.0 on Quiver: Comet's native operators read their broadcasts (the build sides of its
 * broadcast hash joins) through Quiver's executor cache, decoded once per executor and kept as long
 * as Spark keeps the broadcast, with Quiver's bounded decoders. Turned on by one setting, in place
 * of Comet's own extensions, which this class applies itself:
 *
 * {{{
 * spark.sql.extensions=dev.quiver.comet.QuiverCometExtensions
 * }}}
 *
 * Comet still plans, makes and sends every broadcast; only its executors' read changes. The plan
 * shows `QuiverCometBroadcastExchange` where it shows `CometBroadcastExchange` otherwise.
 * `spark.quiver.comet.broadcast.enabled=false` turns it off per session. See `docs/comet.md`.
 *
 * Quiver's rule must run after Comet's, and Spark runs the columnar rules' post-transition parts in
 * the reverse of their order in `spark.sql.extensions`: so Quiver's class comes first, or alone.
 * Listed after Comet's, it refuses to start the session, naming the fix.
 */
@Public
class QuiverCometExtensions extends (SparkSessionExtensions => Unit) {

  override def apply(extensions: SparkSessionExtensions): Unit = {
    val listed = ReadCometBroadcastsThroughQuiver.listedExtensions
    val comet = listed.indexOf(QuiverCometExtensions.Comet)
    val quiver = listed.indexOf(classOf[QuiverCometExtensions].getName)
    if (comet >= 0 && quiver >= 0 && comet < quiver) {
      throw new IllegalArgumentException(
        s"spark.sql.extensions lists ${QuiverCometExtensions.Comet} before " +
          s"${classOf[QuiverCometExtensions].getName}: list Quiver's alone (it applies Comet's " +
          "extensions itself) or first, so that its rule runs after Comet's"
      )
    }
    extensions.injectColumnar(ReadCometBroadcastsThroughQuiver.Columnar)
    if (comet < 0) new CometSparkSessionExtensions().apply(extensions)
  }
}

private object QuiverCometExtensions {

  val Comet = "org.apache.comet.CometSparkSessionExtensions"
}
