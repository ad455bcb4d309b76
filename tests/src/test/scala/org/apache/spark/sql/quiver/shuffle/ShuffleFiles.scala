package org.apache.spark.sql.quiver.shuffle

import java.io.{
  ByteArrayInputStream,
  ByteArrayOutputStream,
  DataOutputStream,
  File,
  FileOutputStream
}
import java.nio.file.Files

import dev.quiver.shuffle.ShuffleIndex
import org.apache.spark.SparkEnv
import org.apache.spark.storage.ShuffleBlockId

/**
 * The files Spark's sort shuffle wrote for one map task, found in the block manager's local
 * directories: the data file (every reduce partition's segment, one after the other) and the index
 * file (the segments' offsets).
 */
final class ShuffleFiles(val shuffleId: Int, val mapId: Long, dataFile: File, indexFile: File) {

  /** The index file's offsets, checked against the data file. */
  def offsets: Array[Long] = ShuffleIndex.read(indexFile.toPath, dataFile.length()).offsets()

  def data: Array[Byte] = Files.readAllBytes(dataFile.toPath)

  /**
   * Rewrites reduce partition `reduceId`'s segment: its bytes as the reduce side reads them (after
   * Spark's shuffle decompression) go through `change`, then are compressed again the way Spark
   * wrote them, so that Spark's own codec accepts them and the change reaches Quiver's reader.
   * With `updateIndex` false the index file keeps the old offsets: a shorter segment then reads
   * as a data file cut short.
   */
  def rewriteSegment(reduceId: Int, updateIndex: Boolean = true)(
      change: Array[Byte] => Array[Byte]
  ): Unit = {
    val bounds = offsets
    val bytes = data
    val start = bounds(reduceId).toInt
    val end = bounds(reduceId + 1).toInt
    val blockId = ShuffleBlockId(shuffleId, mapId, reduceId)
    val serializers = SparkEnv.get.serializerManager
    val plain = readAll(
      serializers.wrapStream(blockId, new ByteArrayInputStream(bytes, start, end - start))
    )
    val compressed = new ByteArrayOutputStream()
    val out = serializers.wrapStream(blockId, compressed)
    out.write(change(plain))
    out.close()
    val segment = compressed.toByteArray
    val rewritten = new ByteArrayOutputStream()
    rewritten.write(bytes, 0, start)
    rewritten.write(segment)
    rewritten.write(bytes, end, bytes.length - end)
    Files.write(dataFile.toPath, rewritten.toByteArray)
    if (updateIndex) rewriteIndex(bounds, reduceId, segment.length - (end - start))
  }

  private def rewriteIndex(bounds: Array[Long], reduceId: Int, shift: Long): Unit = {
    val index = new DataOutputStream(new FileOutputStream(indexFile))
    try
      bounds.zipWithIndex.foreach { case (offset, i) =>
        index.writeLong(if (i > reduceId) offset + shift else offset)
      }
    finally index.close()
  }

  /** The first bytes of the data file. */
  def head(n: Int): Array[Byte] = data.take(n)

  private def readAll(in: java.io.InputStream): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val buffer = new Array[Byte](8192)
    var n = in.read(buffer)
    while (n >= 0) {
      out.write(buffer, 0, n)
      n = in.read(buffer)
    }
    in.close()
    out.toByteArray
  }
}

object ShuffleFiles {

  private val DataFileName = """shuffle_(\d+)_(\d+)_0\.data""".r

  /** The files of every map task of `shuffleId`, by map id. */
  def of(shuffleId: Int): Seq[ShuffleFiles] = {
    val files = SparkEnv.get.blockManager.diskBlockManager.getAllFiles()
    files
      .flatMap { file =>
        file.getName match {
          case DataFileName(id, mapId) if id.toInt == shuffleId =>
            val index = new File(file.getParentFile, s"shuffle_${id}_${mapId}_0.index")
            val indexFile = files.find(_.getName == index.getName).getOrElse(index)
            Some(new ShuffleFiles(shuffleId, mapId.toLong, file, indexFile))
          case _ => None
        }
      }
      .sortBy(_.mapId)
      .toList
  }
}
