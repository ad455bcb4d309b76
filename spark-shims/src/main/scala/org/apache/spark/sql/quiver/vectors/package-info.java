/**
 * Spark {@code ColumnVector}s that read Arrow columns in place from buffers Quiver's decode has
 * validated, with no per-value checks ({@code ValidatedColumnVector}, the column kinds of {@code
 * Columns}, loaded from {@code BatchBuffers}); what is checked is checked once per batch, when a
 * column is loaded.
 *
 * <p>It owns no memory: the buffers belong to the decoded batch they read.
 */
package org.apache.spark.sql.quiver.vectors;
