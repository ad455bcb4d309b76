package dev.quiver.broadcast;

import dev.quiver.annotation.Public;
import dev.quiver.codec.StreamCodec;
import java.io.IOException;
import java.io.InputStream;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The form {@link BroadcastDecoder#keepSource()} makes: the broadcast's streams as they are, read
 * again on demand. An engine that builds its own structure from its own format derives it from
 * these streams, once per entry, and the cache shares, retains, accounts and frees that structure
 * as it does any derived value.
 */
@Public
public final class KeptSource implements DecodedForm {

  static final BroadcastDecoder<KeptSource> DECODER =
      new BroadcastDecoder<KeptSource>() {
        @Override
        public KeptSource decode(BroadcastSource source, BufferAllocator allocator) {
          return new KeptSource(source);
        }

        @Override
        public String name() {
          return "keep-source";
        }
      };

  private final BroadcastSource source;

  private KeptSource(BroadcastSource source) {
    this.source = source;
  }

  public long broadcastId() {
    return source.broadcastId();
  }

  public int streamCount() {
    return source.streamCount();
  }

  /** Bytes of stream {@code index} as broadcast (compressed), or -1 if unknown. */
  public long streamLength(int index) {
    return source.streamLength(index);
  }

  /** Stream {@code index} as broadcast, compressed with {@link #codec()}; the caller closes it. */
  public InputStream openCompressed(int index) throws IOException {
    return source.openStream(index);
  }

  /** Stream {@code index} decompressed with {@link #codec()}; the caller closes it. */
  public InputStream openDecompressed(int index) throws IOException {
    InputStream compressed = source.openStream(index);
    try {
      return source.codec().decompress(compressed);
    } catch (IOException | RuntimeException e) {
      compressed.close();
      throw e;
    }
  }

  public StreamCodec codec() {
    return source.codec();
  }

  /** Holds nothing of its own. */
  @Override
  public void close() {}
}
