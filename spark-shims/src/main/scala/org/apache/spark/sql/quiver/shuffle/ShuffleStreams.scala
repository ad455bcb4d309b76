package org.apache.spark.sql.quiver.shuffle

import java.io.InputStream
import java.nio.file.Files

import dev.quiver.codec.SparkStreamCodec
import dev.quiver.shuffle.{ExactLengthInputStream, ShuffleIndex}
import org.apache.spark.sql.quiver.SparkCodec
import org.apache.spark.{ShuffleDependency, SparkConf, SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.io.CompressionCodec
import org.apache.spark.serializer.SerializerManager
import org.apache.spark.shuffle.{
  BaseShuffleHandle,
  BlockStoreShuffleReader,
  IndexShuffleBlockResolver,
  ShuffleReadMetricsReporter
}
import org.apache.spark.shuffle.sort.SortShuffleManager
import org.apache.spark.storage.{BlockId, BlockManagerId, ShuffleBlockChunkId, ShuffleBlockId}

/**
 * The streams of one reduce partition's map outputs, fetched by Spark's shuffle reader and wrapped
 * by Quiver instead of by Spark's `SerializerManager`:
 *
 *   - a segment whose exact length is known is consumed exactly ([[ExactLengthInputStream]], on
 *     the raw bytes, before decryption and decompression);
 *   - a stream Spark's lz4 codec compressed is decompressed by Quiver's reader of Spark's lz4
 *     framing, not by Spark's codec (lz4-java's fast decompressor, which reads past the end of
 *     hostile input: CVE-2025-12183); one Spark's snappy codec compressed, by Quiver's snappy
 *     reader (snappy-java's allocates hostile chunk lengths before reading them).
 *
 * The reader is built the way `SortShuffleManager.getReader` builds it (Spark 3.4 to 4.2 alike:
 * `getMapSizesByExecutorId`, or `getPushBasedShuffleMapSizesByExecutorId` for push-based
 * shuffles, and a `BlockStoreShuffleReader` over them), with Quiver's `SerializerManager`. Batch
 * fetching stays off, as `getReader` leaves it for a single reduce partition. Under any other
 * shuffle manager (a remote shuffle service) that manager's own reader is used, and neither
 * applies.
 */
private[quiver] object ShuffleStreams {

  /** What `shuffleManager.getReader(handle, reduceId, reduceId + 1, ...).read()` gives. */
  def read(
      dependency: ShuffleDependency[_, _, _],
      reduceId: Int,
      context: TaskContext,
      metrics: ShuffleReadMetricsReporter
  ): Iterator[Product2[Any, Any]] = {
    val env = SparkEnv.get
    env.shuffleManager match {
      case sort: SortShuffleManager =>
        val tracker = env.mapOutputTracker
        val shuffleId = dependency.shuffleId
        val located =
          (if (dependency.shuffleMergeEnabled)
             tracker
               .getPushBasedShuffleMapSizesByExecutorId(
                 shuffleId,
                 0,
                 Int.MaxValue,
                 reduceId,
                 reduceId + 1
               )
               .iter
           else
             tracker.getMapSizesByExecutorId(
               shuffleId,
               0,
               Int.MaxValue,
               reduceId,
               reduceId + 1
             )).toList
        val lengths = new SegmentLengths(
          located,
          env.blockManager.blockManagerId,
          sort.shuffleBlockResolver,
          dependency.partitioner.numPartitions
        )
        val serializers = new QuiverSerializerManager(env.serializerManager, env.conf, lengths)
        new BlockStoreShuffleReader[Any, Any](
          dependency.shuffleHandle.asInstanceOf[BaseShuffleHandle[Any, _, Any]],
          located.iterator,
          context,
          metrics,
          serializers,
          env.blockManager,
          tracker,
          false
        ).read()
      case other =>
        other
          .getReader[Any, Any](dependency.shuffleHandle, reduceId, reduceId + 1, context, metrics)
          .read()
    }
  }
}

/**
 * The exact length of the segments whose length can be had exactly.
 *
 * Covered: segments of map outputs this executor wrote (Spark reads them from the local data file,
 * through a stream that simply ends where the file ends, so a data file shorter than its index
 * reads as fewer bytes with no error). Their length is what Spark itself takes the segment's
 * bounds from: the index file the block resolver finds for the map output, read by
 * [[ShuffleIndex]] (one more small read of the index file per segment), which also fails the
 * fetch, naming the file, when the segment cannot be valid or ends past the data file's end.
 *
 * Not covered, and why:
 *   - remote segments: the stream Spark hands over is made from the fetched buffer, so its length
 *     is the buffer's by construction, and that is the length the serving side took from its own
 *     index file (a serving side whose data file is short fails the transfer: Netty's file region
 *     refuses a file shorter than the count it is asked to send);
 *   - segments of other executors on this host that Spark reads from their disk directly
 *     (`spark.shuffle.readHostLocalDisk`): their directories are not this executor's, so the
 *     resolver here cannot find their index files without Spark's host-local directory cache,
 *     whose API differs across the supported releases;
 *   - push-merged chunks: their lengths come from merge metadata, not an index file.
 *
 * The sizes in `MapStatus` (and so in `located`) are not used as lengths: under
 * `HighlyCompressedMapStatus` (more than 2000 partitions, or blocks under
 * `spark.shuffle.accurateBlockThreshold`) they are approximations.
 */
final private[shuffle] class SegmentLengths(
    located: Seq[(BlockManagerId, scala.collection.Seq[(BlockId, Long, Int)])],
    local: BlockManagerId,
    resolver: IndexShuffleBlockResolver,
    partitions: Int
) {

  private val localBlocks: Set[BlockId] =
    located.iterator
      .filter { case (address, _) => address.executorId == local.executorId }
      .flatMap { case (_, blocks) => blocks.iterator.map(_._1) }
      .toSet

  /** The exact length of `id`'s segment and what to call it in errors, if known. */
  def apply(id: ShuffleBlockId): Option[(Long, String)] =
    if (!localBlocks.contains(id)) None
    else {
      val index = resolver.getIndexFile(id.shuffleId, id.mapId).toPath
      val dataSize = Files.size(resolver.getDataFile(id.shuffleId, id.mapId).toPath)
      val length = ShuffleIndex.segmentLength(index, partitions, id.reduceId, dataSize)
      val what = s"shuffle ${id.shuffleId} map ${id.mapId} reduce partition ${id.reduceId} " +
        s"(block ${id.name}, local: its length is the index file's)"
      Some((length, what))
    }
}

/**
 * Spark's `SerializerManager` for the streams of a Quiver exchange's reduce side, as
 * `BlockStoreShuffleReader` uses it (`wrapStream(blockId, in)` on each fetched stream, nothing
 * else, in Spark 3.4 to 4.2). Order as in Spark: the raw segment (checked for its exact length
 * here), then decryption by Spark when IO encryption is on, then decompression when
 * `spark.shuffle.compress` is on. Decrypted bytes are no more trusted than the raw ones (Spark's
 * IO encryption is not authenticated), so Quiver's readers decompress them too.
 *
 * Decompression ([[SparkCodec.quiverReaderFor]]): Spark's lz4 and snappy codecs are
 * read by [[SparkStreamCodec]], which reads the same framings with Quiver's bounded readers (lz4:
 * LZ4Block, xxhash32 checksums with Spark's seed, concatenated streams; snappy: snappy-java's
 * stream format, concatenated streams). zstd, and any other codec, stays on Spark's own: zstd-jni's
 * `ZstdInputStreamNoFinalizer`, whose native decoder reads only the input it is given and refuses
 * windows above zstd's default `windowLogMax` of 27 (128 MiB of native window per stream at most);
 * Spark sets no other limit.
 */
final private[shuffle] class QuiverSerializerManager(
    spark: SerializerManager,
    conf: SparkConf,
    lengths: SegmentLengths
) extends SerializerManager(SparkEnv.get.serializer, conf) {

  private val compressShuffle: Boolean = conf.get(config.SHUFFLE_COMPRESS)

  /** Quiver's reader of the configured codec's streams, when Quiver has one. */
  private lazy val quiverCodec: Option[SparkStreamCodec] =
    SparkCodec.quiverReaderFor(CompressionCodec.createCodec(conf))

  override def wrapStream(blockId: BlockId, s: InputStream): InputStream = blockId match {
    case id: ShuffleBlockId =>
      val checked = lengths(id).fold(s) { case (length, what) =>
        new ExactLengthInputStream(s, length, what)
      }
      decompress(id, spark.wrapForEncryption(checked))
    case id: ShuffleBlockChunkId => decompress(id, spark.wrapForEncryption(s))
    case other => spark.wrapStream(other, s)
  }

  private def decompress(id: BlockId, s: InputStream): InputStream =
    if (!compressShuffle) s
    else
      quiverCodec match {
        case Some(codec) => codec.decompress(s)
        case None => spark.wrapForCompression(id, s)
      }
}
