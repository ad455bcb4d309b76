package dev.quiver.testing;

import dev.quiver.broadcast.BroadcastSource;
import dev.quiver.codec.StreamCodec;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.List;

/** A broadcast whose streams are byte arrays in memory. */
public class InMemoryBroadcast implements BroadcastSource {

  private final long id;
  private final StreamCodec codec;
  private final List<byte[]> streams;
  private final boolean lengthsKnown;

  /**
   * @param lengthsKnown whether {@link #streamLength} tells each stream's length, as a fetched
   *     broadcast does, or says it is unknown (-1), as a stream read as it arrives does
   */
  public InMemoryBroadcast(long id, StreamCodec codec, List<byte[]> streams, boolean lengthsKnown) {
    this.id = id;
    this.codec = codec;
    this.streams = streams;
    this.lengthsKnown = lengthsKnown;
  }

  @Override
  public long broadcastId() {
    return id;
  }

  @Override
  public int streamCount() {
    return streams.size();
  }

  @Override
  public InputStream openStream(int index) {
    return new ByteArrayInputStream(streams.get(index));
  }

  @Override
  public long streamLength(int index) {
    return lengthsKnown ? streams.get(index).length : -1;
  }

  @Override
  public StreamCodec codec() {
    return codec;
  }

  /** The bytes of stream {@code index}. */
  public byte[] streamBytes(int index) {
    return streams.get(index);
  }

  /** The streams, in order. */
  protected List<byte[]> streams() {
    return streams;
  }
}
