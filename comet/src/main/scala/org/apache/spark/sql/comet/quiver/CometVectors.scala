package org.apache.spark.sql.comet.quiver

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import dev.quiver.broadcast.BroadcastReader
import org.apache.arrow.memory.{ArrowBuf => QuiverBuf}
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot => QuiverRoot, VectorUnloader}
import org.apache.arrow.vector.dictionary.{DictionaryProvider => QuiverDictionaries}
import org.apache.arrow.vector.ipc.message.{ArrowFieldNode => QuiverNode}
import org.apache.arrow.vector.types.pojo.{Schema => QuiverSchema}
import org.apache.comet.shaded.arrow.memory.{ArrowBuf, BufferAllocator, ForeignAllocation}
import org.apache.comet.shaded.arrow.vector.{VectorLoader, VectorSchemaRoot}
import org.apache.comet.shaded.arrow.vector.dictionary.{Dictionary, DictionaryProvider}
import org.apache.comet.shaded.arrow.vector.ipc.message.{ArrowFieldNode, ArrowRecordBatch}
import org.apache.comet.shaded.arrow.vector.types.pojo.{ArrowType, DictionaryEncoding, Schema}

/**
 * One task's batches of a decoded broadcast as Comet's own (relocated) Arrow vectors, over the very
 * memory Quiver's cache decoded: each batch's memory is lent to Comet's allocator as one foreign
 * allocation, its buffers slices of it, whose release gives it back to [[LentBuffers]]. No byte is
 * copied; only vector objects are made per batch.
 *
 * Comet's operators take only vectors of its relocated Arrow (`org.apache.comet.shaded.arrow`), and
 * its jar carries `org.apache.arrow.c` compiled against those, so Quiver's C Data export (of
 * Spark's Arrow) cannot share a class path with it. Lending buffers needs neither.
 *
 * Not thread-safe: one task's.
 */
final private[quiver] class CometVectors(allocator: BufferAllocator, lent: LentBuffers) {

  /** Comet's schema of each stream, read once per task. */
  private val schemas = mutable.Map.empty[Int, Schema]

  /** Comet's dictionaries of each stream, made at their first use and closed at the task's end. */
  private val dictionaries = mutable.Map.empty[Int, ForeignDictionaries]

  /** The reader's current batch as Comet's vectors: the caller closes the root. */
  def batch(reader: BroadcastReader): VectorSchemaRoot = {
    val shared = reader.currentBatch()
    val schema = schemas.getOrElseUpdate(reader.streamIndex(), relocated(reader.currentSchema()))
    load(schema, shared.getLength, shared.getNodes.asScala.toSeq, shared.getBuffers.asScala.toSeq)
  }

  /** The current stream's dictionaries as Comet's, or an empty provider. */
  def dictionaries(reader: BroadcastReader): DictionaryProvider =
    dictionaries.getOrElseUpdate(reader.streamIndex(), relocated(reader.dictionaries()))

  /** Closes the dictionaries this task made (the batches are closed by their users). */
  def close(): Unit = {
    dictionaries.values.foreach(_.close())
    dictionaries.clear()
  }

  private def relocated(schema: QuiverSchema): Schema = CometVectors.relocated(schema)

  private def relocated(quiver: QuiverDictionaries): ForeignDictionaries = {
    val comet = new ForeignDictionaries()
    try {
      quiver.getDictionaryIds.asScala.foreach { id =>
        val dictionary = quiver.lookup(id)
        val encoding = dictionary.getEncoding
        val indexType = encoding.getIndexType
        val vector = loadOne(dictionary.getVector)
        comet.put(
          new Dictionary(
            vector,
            new DictionaryEncoding(
              id,
              encoding.isOrdered,
              new ArrowType.Int(indexType.getBitWidth, indexType.getIsSigned)
            )
          )
        )
      }
      comet
    } catch {
      case e: Throwable =>
        comet.close()
        throw e
    }
  }

  /** A dictionary's values as Comet's vector, over the same buffers. */
  private def loadOne(vector: FieldVector) = {
    val unloaded = new VectorUnloader(new QuiverRoot(java.util.List.of(vector))).getRecordBatch
    try {
      val schema = relocated(new QuiverSchema(java.util.List.of(vector.getField)))
      val root = load(
        schema,
        unloaded.getLength,
        unloaded.getNodes.asScala.toSeq,
        unloaded.getBuffers.asScala.toSeq
      )
      root.getVector(0)
    } finally unloaded.close()
  }

  private def load(
      schema: Schema,
      rows: Int,
      nodes: Seq[QuiverNode],
      buffers: Seq[QuiverBuf]
  ): VectorSchemaRoot = {
    val lentSpan = lend(buffers.filter(_.capacity() > 0))
    try {
      val lentBuffers = buffers.map { buffer =>
        lentSpan.fold(allocator.getEmpty) { case (span, start) =>
          if (buffer.capacity() == 0) allocator.getEmpty
          else span.slice(buffer.memoryAddress() - start, buffer.capacity())
        }
      }
      val fieldNodes = nodes.map(node => new ArrowFieldNode(node.getLength, node.getNullCount))
      val batch = new ArrowRecordBatch(rows, fieldNodes.asJava, lentBuffers.asJava)
      val root = VectorSchemaRoot.create(schema, allocator)
      try new VectorLoader(root).load(batch)
      catch {
        case e: Throwable =>
          root.close()
          throw e
      } finally batch.close()
      root
    } finally lentSpan.foreach(_._1.close()) // the vectors hold their own references now
  }

  /**
   * The memory from the first of `buffers` to the end of the last as one of Comet's buffers, and
   * its address: one foreign allocation per batch (a batch's buffers are slices of its decoded
   * body), given back when Comet has let go of every slice of it. Nothing is read here; Comet
   * reads only the slices.
   */
  private def lend(buffers: Seq[QuiverBuf]): Option[(ArrowBuf, Long)] =
    if (buffers.isEmpty) None
    else {
      val start = buffers.map(_.memoryAddress()).min
      val end = buffers.map(b => b.memoryAddress() + b.capacity()).max
      lent.lend()
      try
        Some(allocator.wrapForeignAllocation(new ForeignAllocation(end - start, start) {
          override protected def release0(): Unit = lent.giveBack()
        }) -> start)
      catch {
        case e: Throwable =>
          lent.giveBack()
          throw e
      }
    }
}

private[quiver] object CometVectors {

  /**
   * Comet's form of each decoded stream's schema, made once per executor: every task of a
   * broadcast sees the same schema object, and the conversion (through Arrow's JSON form) costs
   * more than a task's view of a small broadcast. Weak keys: it goes with the decoded stream.
   */
  private val relocatedSchemas =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[QuiverSchema, Schema]())

  def relocated(schema: QuiverSchema): Schema =
    relocatedSchemas.computeIfAbsent(schema, quiver => Schema.fromJSON(quiver.toJson))
}

/** Comet's dictionaries of one stream, closed with the task that made them. */
final private[quiver] class ForeignDictionaries
    extends DictionaryProvider.MapDictionaryProvider()
    with AutoCloseable {

  override def close(): Unit =
    getDictionaryIds.asScala.foreach(id => lookup(id).getVector.close())
}
