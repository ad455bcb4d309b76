package dev.quiver.shuffle;

import dev.quiver.testing.Bytes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Builds shuffle streams for tests: written by {@link ShuffleBlockWriter}, or by hand. */
public final class Blocks {

  private Blocks() {}

  /** One block per root, in order. */
  public static byte[] write(BlockCodec codec, VectorSchemaRoot... roots) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ShuffleBlockWriter writer = new ShuffleBlockWriter(out, codec);
    for (VectorSchemaRoot root : roots) {
      writer.write(root);
    }
    return out.toByteArray();
  }

  /** The stream offset at which each block starts, plus the stream's end. */
  static List<Integer> boundaries(byte[] stream) {
    List<Integer> starts = new ArrayList<>();
    ByteBuffer in = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    int at = 0;
    while (at < stream.length) {
      starts.add(at);
      at += ShuffleBlockFormat.LENGTH_FIELD_BYTES + (int) in.getLong(at);
    }
    starts.add(at);
    return starts;
  }

  /** A block's 20 header bytes, with any values (hostile ones too). */
  static byte[] header(long length, long fieldCount, byte[] tag) {
    return ByteBuffer.allocate(20)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putLong(length)
        .putLong(fieldCount)
        .put(tag)
        .array();
  }

  /** A block around any body. */
  static byte[] block(long fieldCount, BlockCodec codec, byte[] body) {
    return Bytes.concat(
        header(ShuffleBlockFormat.HEADER_BYTES + body.length, fieldCount, codec.tag()), body);
  }
}
