package org.apache.spark.sql.comet.quiver

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import dev.quiver.broadcast.BroadcastReader
import dev.quiver.ipc.DecodedStream
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

  /** The stream of the task's last batch and Comet's form of it: a task reads stream by stream. */
  private var formStream: DecodedStream = _
  private var form: StreamForm = _

  /** Comet's dictionaries of each stream, made at their first use and closed at the task's end. */
  private val dictionaries = mutable.Map.empty[Int, ForeignDictionaries]

  /** The reader's current batch as Comet's vectors: the caller closes the root. */
  def batch(reader: BroadcastReader): VectorSchemaRoot = {
    val shared = reader.currentBatch()
    load(formOf(reader).schema, shared.getLength, shared.getNodes, shared.getBuffers)
  }

  /** The current stream's dictionaries as Comet's, or an empty provider. */
  def dictionaries(reader: BroadcastReader): DictionaryProvider =
    if (formOf(reader).dictionarySchemas.isEmpty) CometVectors.NoDictionaries
    else dictionaries.getOrElseUpdate(reader.streamIndex(), relocated(reader.dictionaries(), form))

  /** Closes the dictionaries this task made (the batches are closed by their users). */
  def close(): Unit = {
    dictionaries.values.foreach(_.close())
    dictionaries.clear()
  }

  private def formOf(reader: BroadcastReader): StreamForm = {
    val stream = reader.broadcast().streams().get(reader.streamIndex())
    if (stream ne formStream) {
      form = CometVectors.formOf(stream)
      formStream = stream
    }
    form
  }

  private def relocated(quiver: QuiverDictionaries, form: StreamForm): ForeignDictionaries = {
    val comet = new ForeignDictionaries()
    try {
      quiver.getDictionaryIds.asScala.foreach { id =>
        val dictionary = quiver.lookup(id)
        val encoding = dictionary.getEncoding
        val indexType = encoding.getIndexType
        val vector = loadOne(dictionary.getVector, form.dictionarySchemas(id))
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

  /** A dictionary's values as Comet's vector of `schema` (of its one field), over the same buffers. */
  private def loadOne(vector: FieldVector, schema: Schema) = {
    val unloaded = new VectorUnloader(new QuiverRoot(java.util.List.of(vector))).getRecordBatch
    try load(schema, unloaded.getLength, unloaded.getNodes, unloaded.getBuffers).getVector(0)
    finally unloaded.close()
  }

  /**
   * `buffers` as slices of one foreign allocation over them (see [[lend]]), loaded into Comet's
   * vectors of `schema`. Plain loops over the Java lists: this runs for every batch of every task,
   * and at a small broadcast it is most of what a task of the adapter does.
   */
  private def load(
      schema: Schema,
      rows: Int,
      nodes: java.util.List[QuiverNode],
      buffers: java.util.List[QuiverBuf]
  ): VectorSchemaRoot = {
    // The span of the buffers that have memory: a batch's buffers are slices of its decoded body.
    var start = Long.MaxValue
    var end = Long.MinValue
    var i = 0
    while (i < buffers.size()) {
      val buffer = buffers.get(i)
      if (buffer.capacity() > 0) {
        start = math.min(start, buffer.memoryAddress())
        end = math.max(end, buffer.memoryAddress() + buffer.capacity())
      }
      i += 1
    }
    val span = if (start < end) lend(start, end) else null
    try {
      val lentBuffers = new java.util.ArrayList[ArrowBuf](buffers.size())
      i = 0
      while (i < buffers.size()) {
        val buffer = buffers.get(i)
        lentBuffers.add(
          if (buffer.capacity() == 0) allocator.getEmpty
          else span.slice(buffer.memoryAddress() - start, buffer.capacity())
        )
        i += 1
      }
      val fieldNodes = new java.util.ArrayList[ArrowFieldNode](nodes.size())
      i = 0
      while (i < nodes.size()) {
        val node = nodes.get(i)
        fieldNodes.add(new ArrowFieldNode(node.getLength, node.getNullCount))
        i += 1
      }
      val batch = new ArrowRecordBatch(rows, fieldNodes, lentBuffers)
      val root = VectorSchemaRoot.create(schema, allocator)
      try new VectorLoader(root).load(batch)
      catch {
        case e: Throwable =>
          root.close()
          throw e
      } finally batch.close()
      root
    } finally if (span != null) span.close() // the vectors hold their own references now
  }

  /**
   * The memory from `start` to `end` as one of Comet's buffers: one foreign allocation per batch,
   * given back when Comet has let go of every slice of it. Nothing is read here; Comet reads only
   * the slices.
   */
  private def lend(start: Long, end: Long): ArrowBuf = {
    lent.lend()
    try
      allocator.wrapForeignAllocation(new ForeignAllocation(end - start, start) {
        override protected def release0(): Unit = lent.giveBack()
      })
    catch {
      case e: Throwable =>
        lent.giveBack()
        throw e
    }
  }
}

/**
 * Comet's form of one decoded stream: its schema in Comet's relocated Arrow, and the schema (of one
 * field) of each of its dictionaries' values, by id; none for a stream without dictionaries. Holds
 * nothing of the stream itself.
 */
final private[quiver] case class StreamForm(schema: Schema, dictionarySchemas: Map[Long, Schema])

private[quiver] object CometVectors {

  /**
   * Comet's form of each decoded stream, made once per executor: every task of a broadcast reads
   * the same stream objects, and the schema's conversion (through Arrow's JSON form) costs more
   * than a task's view of a small broadcast. Weak keys compared by identity (a stream does not
   * override `equals`), so the lookup hashes no schema and the form goes with the decoded stream.
   */
  private val forms =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[DecodedStream, StreamForm]())

  def formOf(stream: DecodedStream): StreamForm =
    forms.computeIfAbsent(
      stream,
      decoded => StreamForm(relocated(decoded.schema()), valuesOf(decoded))
    )

  private def valuesOf(stream: DecodedStream): Map[Long, Schema] =
    stream.getDictionaryIds.asScala.map { id =>
      val values = stream.lookup(id).getVector.getField
      id.longValue -> relocated(new QuiverSchema(java.util.List.of(values)))
    }.toMap

  /** `schema` in Comet's relocated Arrow. */
  private def relocated(schema: QuiverSchema): Schema = Schema.fromJSON(schema.toJson)

  /** The dictionaries of a stream without any: Comet looks up none. */
  val NoDictionaries: DictionaryProvider = new DictionaryProvider {
    override def lookup(id: Long): Dictionary = null
    override def getDictionaryIds: java.util.Set[java.lang.Long] = java.util.Set.of()
  }
}

/** Comet's dictionaries of one stream, closed with the task that made them. */
final private[quiver] class ForeignDictionaries
    extends DictionaryProvider.MapDictionaryProvider()
    with AutoCloseable {

  override def close(): Unit =
    getDictionaryIds.asScala.foreach(id => lookup(id).getVector.close())
}
