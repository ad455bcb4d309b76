package dev.quiver.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.util.AutoCloseables;

/**
 * Reads the encapsulated message framing of an Arrow IPC stream itself, so that every length is
 * checked before anything is allocated for it, whatever order a given Arrow release reads in:
 *
 * <pre>
 * 0xFFFFFFFF        continuation marker (absent in the pre-0.15 legacy framing)
 * int32 LE          metadata length m; 0 is the end-of-stream marker
 * m bytes           a flatbuffer {@code Message}: header type, version, body length b
 * b bytes           the body: the buffers the header describes
 * </pre>
 *
 * <p>The allocation rule: when the stream's length is known (uncompressed bytes held whole), a
 * metadata or body length beyond the bytes left is corruption, reported before allocating. When it
 * is not (a decompressing stream), a claimed length is trusted only up to {@link
 * ArrowIpc#UNREAD_CLAIM_BYTES}; beyond that the metadata or body is read in pieces, each at most
 * the size of what has arrived so far, so that a lying length costs at most about twice the bytes
 * actually read plus one piece, never the length it claims.
 */
final class IpcMessageReader {

  /**
   * Far above any real message's metadata (a schema of 100,000 columns is a few MiB), far below
   * what a hostile length (up to 2 GiB) would have the reader allocate.
   */
  static final int MAX_METADATA_LENGTH = 64 << 20;

  /** Arrow cannot load a record batch whose body is over 2 GiB. */
  static final long MAX_BODY_LENGTH = Integer.MAX_VALUE;

  private static final int CONTINUATION = 0xFFFFFFFF;

  private final ReadableByteChannel in;
  private final BufferAllocator allocator;
  private final long knownLength;

  /** How much of a claimed length is allocated before any of it has arrived. */
  private final long trustedClaim;

  private final ByteBuffer prefix = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
  private long position;
  private int messages;

  /** Where the message being read starts, for error messages. */
  private long messageOffset;

  /**
   * @param knownLength the exact number of bytes {@code in} holds, or -1 if unknown
   * @param trustedClaim when the length is unknown, how much of a claimed length to allocate before
   *     any of it has arrived; at least {@link ArrowIpc#UNREAD_CLAIM_BYTES}
   */
  IpcMessageReader(
      ReadableByteChannel in, BufferAllocator allocator, long knownLength, long trustedClaim) {
    this.in = in;
    this.allocator = allocator;
    this.knownLength = knownLength;
    // Where the length is known, a claim was checked against the bytes that remain.
    this.trustedClaim =
        knownLength >= 0 ? Long.MAX_VALUE : Math.max(ArrowIpc.UNREAD_CLAIM_BYTES, trustedClaim);
  }

  /** One message: its metadata, and its body (which the caller closes). */
  static final class IpcMessage implements AutoCloseable {
    final int index;
    final long offset;
    final Message metadata;
    final ArrowBuf body;

    IpcMessage(int index, long offset, Message metadata, ArrowBuf body) {
      this.index = index;
      this.offset = offset;
      this.metadata = metadata;
      this.body = body;
    }

    /** "message 3 at byte 1234", for error messages. */
    String describe() {
      return "message " + index + " at byte " + offset;
    }

    @Override
    public void close() {
      body.close();
    }
  }

  /** Messages read so far (the next message's index). */
  int messagesRead() {
    return messages;
  }

  /** Bytes consumed so far. */
  long position() {
    return position;
  }

  /**
   * The next message, or null at the end-of-stream marker.
   *
   * @throws IpcFormatException for a stream that ends before its end-of-stream marker, a length
   *     that cannot be right, or metadata that is not an Arrow message
   */
  IpcMessage next() throws IOException {
    long offset = position;
    int index = messages;
    messageOffset = offset;
    int length = readInt(true);
    if (length == CONTINUATION) {
      length = readInt(false);
    }
    if (length == 0) {
      return null;
    }
    if (length < 0 || length > MAX_METADATA_LENGTH) {
      throw new IpcFormatException(
          String.format(
              "%s claims %d bytes of metadata (0 to %d allowed)",
              where(), length & 0xFFFFFFFFL, MAX_METADATA_LENGTH));
    }
    checkRemaining("metadata", length);
    Message metadata = parse(readMetadata(length));
    long bodyLength;
    try {
      bodyLength = metadata.bodyLength();
    } catch (RuntimeException e) {
      throw new IpcFormatException(
          where() + ": the metadata is not an Arrow message flatbuffer", e);
    }
    if (bodyLength < 0 || bodyLength > MAX_BODY_LENGTH) {
      throw new IpcFormatException(
          String.format(
              "%s claims a body of %d bytes (at most %d can be read)",
              where(), bodyLength, MAX_BODY_LENGTH));
    }
    checkRemaining("body", bodyLength);
    ArrowBuf body = readBody(bodyLength);
    messages++;
    return new IpcMessage(index, offset, metadata, body);
  }

  /**
   * Checks that nothing follows the end-of-stream marker: an IPC stream held whole is consumed
   * exactly, so bytes after its end are damage (a second stream, or a misplaced marker).
   */
  void expectEnd() throws IOException {
    ByteBuffer one = ByteBuffer.allocate(1);
    int read = in.read(one);
    while (read == 0) {
      read = in.read(one);
    }
    if (read > 0) {
      throw new IpcFormatException(
          "bytes follow the end-of-stream marker that ends at byte " + position);
    }
    if (knownLength >= 0 && position != knownLength) {
      throw new IpcFormatException(
          String.format("the stream ends at byte %d but holds %d bytes", position, knownLength));
    }
  }

  /** "message 3 at byte 1234": the message being read, made only for an error. */
  private String where() {
    return "message " + messages + " at byte " + messageOffset;
  }

  private int readInt(boolean atMessageStart) throws IOException {
    prefix.clear();
    int read = fill(prefix);
    if (read < 4) {
      if (read == 0 && atMessageStart) {
        throw new IpcFormatException(
            where() + ": the stream ends without its end-of-stream marker (truncated)");
      }
      throw new IpcFormatException(
          where() + ": the stream ends inside the message's length prefix (truncated)");
    }
    return prefix.getInt(0);
  }

  private void checkRemaining(String part, long length) throws IpcFormatException {
    if (knownLength >= 0 && length > knownLength - position) {
      throw new IpcFormatException(
          String.format(
              "%s claims %d bytes of %s, but only %d bytes remain",
              where(), length, part, knownLength - position));
    }
  }

  private ByteBuffer readMetadata(int length) throws IOException {
    byte[] bytes = new byte[(int) Math.min(length, trustedClaim)];
    int filled = 0;
    while (true) {
      ByteBuffer target = ByteBuffer.wrap(bytes, filled, bytes.length - filled);
      filled += fill(target);
      if (filled < bytes.length) {
        throw truncated("metadata", length, filled);
      }
      if (filled == length) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
      }
      bytes = Arrays.copyOf(bytes, (int) Math.min(length, Math.max(trustedClaim, 2L * filled)));
    }
  }

  private ArrowBuf readBody(long length) throws IOException {
    if (length == 0) {
      return allocator.getEmpty();
    }
    if (length <= trustedClaim) {
      ArrowBuf body = allocator.buffer(length);
      try {
        long read = fill(body, 0, length);
        if (read < length) {
          throw truncated("body", length, read);
        }
        return body;
      } catch (IOException | RuntimeException | Error e) {
        AutoCloseables.close(e, body);
        throw e;
      }
    }
    return readBodyInPieces(length);
  }

  /**
   * Reads a body longer than the reader trusts in pieces, each at most the size of what has arrived
   * so far, then joins them into one buffer: a lying length costs at most about twice the bytes
   * that really arrive plus one piece; a true one costs one copy of the body.
   */
  private ArrowBuf readBodyInPieces(long length) throws IOException {
    List<ArrowBuf> pieces = new ArrayList<>();
    List<Long> sizes = new ArrayList<>();
    ArrowBuf body = null;
    try {
      long filled = 0;
      while (filled < length) {
        long size = Math.min(length - filled, Math.max(trustedClaim, filled));
        ArrowBuf piece = allocator.buffer(size);
        pieces.add(piece);
        sizes.add(size);
        long read = fill(piece, 0, size);
        filled += read;
        if (read < size) {
          throw truncated("body", length, filled);
        }
      }
      body = allocator.buffer(length);
      long at = 0;
      for (int i = 0; i < pieces.size(); i++) {
        body.setBytes(at, pieces.get(i), 0, sizes.get(i));
        at += sizes.get(i);
      }
    } catch (IOException | RuntimeException | Error e) {
      AutoCloseables.close(e, pieces);
      AutoCloseables.close(e, body);
      throw e;
    }
    pieces.forEach(ArrowBuf::close);
    return body;
  }

  private IpcFormatException truncated(String part, long claimed, long read) {
    return new IpcFormatException(
        String.format(
            "%s claims %d bytes of %s, but the stream ends after %d of them (truncated)",
            where(), claimed, part, read));
  }

  /** Parses the metadata flatbuffer, turning what garbage makes flatbuffers throw into ours. */
  private Message parse(ByteBuffer metadata) throws IpcFormatException {
    try {
      Message message = Message.getRootAsMessage(metadata);
      short version = message.version();
      if (version < MetadataVersion.V4 || version > MetadataVersion.V5) {
        throw new IpcFormatException(
            String.format(
                "%s has metadata version %d; Quiver reads V4 and V5 (%d and %d)",
                where(), version, MetadataVersion.V4, MetadataVersion.V5));
      }
      byte type = message.headerType();
      if (type != MessageHeader.Schema
          && type != MessageHeader.RecordBatch
          && type != MessageHeader.DictionaryBatch) {
        throw new IpcFormatException(
            where() + " has header type " + type + ", not a schema, record or dictionary batch");
      }
      return message;
    } catch (RuntimeException e) {
      // Flatbuffers index straight into the bytes: garbage ends in bounds errors.
      throw new IpcFormatException(
          where() + ": the metadata is not an Arrow message flatbuffer", e);
    }
  }

  private int fill(ByteBuffer target) throws IOException {
    int total = 0;
    while (target.hasRemaining()) {
      int read = in.read(target);
      if (read < 0) {
        break;
      }
      total += read;
    }
    position += total;
    return total;
  }

  private long fill(ArrowBuf target, long from, long length) throws IOException {
    long total = 0;
    while (total < length) {
      int viewLength = (int) Math.min(Integer.MAX_VALUE, length - total);
      ByteBuffer view = target.nioBuffer(from + total, viewLength);
      int read = fill(view);
      total += read;
      if (read < viewLength) {
        break;
      }
    }
    return total;
  }
}
