package dev.quiver.spark.shuffle

import java.nio.ByteBuffer

import dev.quiver.annotation.Public
import dev.quiver.shuffle.BlockCodec

/**
 * One shuffle block as the raw-block path hands it to an engine that decodes natively: the header
 * fields and the still-compressed body (one Arrow IPC stream of one batch, compressed with
 * `codec`).
 *
 * `body` is a direct buffer, from position 0 to the body's end, that the reader reuses: it is valid
 * until the iterator that returned this block is asked for the next one. Copy what must outlive
 * that.
 *
 * @param blockIndex the block's position in its map output's stream: 0 for the first
 */
@Public
final class RawShuffleBlock(
    val codec: BlockCodec,
    val fieldCount: Int,
    val body: ByteBuffer,
    val blockIndex: Long
) {

  override def toString: String =
    s"RawShuffleBlock($codec, $fieldCount fields, ${body.remaining()} body bytes, " +
      s"block $blockIndex)"
}
