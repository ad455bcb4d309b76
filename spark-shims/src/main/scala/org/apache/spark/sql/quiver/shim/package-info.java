/**
 * What differs between the Spark release lines: the {@code SparkShim} interface, and {@code
 * SparkShims}, the loader that picks the one implementation on the class path for the running
 * Spark. Each per-release artifact carries one: the {@code spark-3.5} module's serves Spark 3.4 and
 * 3.5, the {@code spark-4.1} module's the 4.x lines (4.0, 4.1 and 4.2).
 *
 * <p>It owns the choice of shim and the list of supported lines that the loader names when none
 * fits ({@code META-INF/quiver/spark-lines.properties}, written by {@code dev/versions}).
 */
package org.apache.spark.sql.quiver.shim;
