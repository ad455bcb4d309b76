package dev.quiver.ipc;

import dev.quiver.codec.SafeLz4;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Decodes one LZ4 frame (the body compression codec {@code LZ4_FRAME}) into a buffer of exactly the
 * length the IPC body declares, reading the frame format itself so that only {@link SafeLz4}'s safe
 * decompressor ever sees the blocks. lz4-java's own {@code LZ4FrameInputStream} is not used: on
 * 1.8.0 it takes {@code LZ4Factory.fastestInstance()}'s safe decompressor, which off the system
 * class path is the {@code sun.misc.Unsafe} instance {@link SafeLz4} avoids, and it is a stream
 * (copies through its own buffers) where the output here is the destination buffer itself.
 *
 * <pre>
 * int32 LE   magic 0x184D2204
 * FLG        version 01, block independence, block checksum, content size, content checksum,
 *            (reserved), dictionary id
 * BD         block maximum size: 64 KiB, 256 KiB, 1 MiB or 4 MiB
 * [int64 LE  content size]   [int32 LE  dictionary id]
 * HC         (XXH32 of FLG up to here) &gt;&gt; 8 &amp; 0xFF
 * blocks     int32 LE size (high bit: stored uncompressed), the bytes, [int32 LE XXH32 of them]
 * int32 0    end mark
 * [int32 LE  XXH32 of the whole content]
 * </pre>
 *
 * <p>Every length is checked against the bytes that exist and the output's declared length before
 * it is used. Blocks are decoded one by one straight into the output. A frame may link its blocks
 * (the default of liblz4's frame API, and so of Arrow C++): a block may then copy from the 64 KiB
 * before it, which {@link #decodeLinked} gives the safe decompressor as part of the block.
 */
final class Lz4FrameDecoder {

  static final int MAGIC = 0x184D2204;

  /** The frame's name in messages. */
  private static final String FRAME = "LZ4 frame";

  /** An LZ4 block decodes to at most about 255 bytes per input byte (one per length byte). */
  static final long MAX_EXPANSION = 255;

  private static final int FLG_VERSION_MASK = 0xC0;
  private static final int FLG_VERSION_01 = 0x40;
  private static final int FLG_BLOCK_INDEPENDENCE = 0x20;
  private static final int FLG_BLOCK_CHECKSUM = 0x10;
  private static final int FLG_CONTENT_SIZE = 0x08;
  private static final int FLG_CONTENT_CHECKSUM = 0x04;
  private static final int FLG_RESERVED = 0x02;
  private static final int FLG_DICTIONARY_ID = 0x01;
  private static final int UNCOMPRESSED_BLOCK = 0x80000000;

  /** How far back a block of a linked frame may refer: LZ4's largest match offset. */
  static final int LINK_WINDOW = 64 * 1024;

  private static final XXHash32 XXHASH = chooseHash();

  private Lz4FrameDecoder() {}

  /**
   * Decodes the frame in {@code in} (all of its remaining bytes; its position is not moved) into
   * {@code out} at 0, which must then hold exactly {@code out.capacity()} bytes.
   *
   * @throws IpcFormatException for bytes that are not exactly one valid frame of that length
   */
  static void decode(ByteBuffer in, ByteBuffer out) throws IpcFormatException {
    ByteBuffer src = in.slice().order(ByteOrder.LITTLE_ENDIAN);
    int end = src.limit();
    int declared = out.capacity();
    FrameChecks.requireHeader(src, 7, MAGIC, FRAME, "an");
    int flg = src.get(4) & 0xFF;
    int bd = src.get(5) & 0xFF;
    if ((flg & FLG_VERSION_MASK) != FLG_VERSION_01 || (flg & FLG_RESERVED) != 0) {
      throw new IpcFormatException(String.format("LZ4 frame: bad FLG byte 0x%02X", flg));
    }
    int sizeId = (bd >>> 4) & 0x7;
    if ((bd & 0x8F) != 0 || sizeId < 4) {
      throw new IpcFormatException(String.format("LZ4 frame: bad BD byte 0x%02X", bd));
    }
    int blockMaximum = 1 << (8 + 2 * sizeId);
    int at = 6;
    if ((flg & FLG_CONTENT_SIZE) != 0) {
      FrameChecks.require(src, at, 9, FRAME, "its content size");
      long contentSize = src.getLong(at);
      if (contentSize != declared) {
        throw new IpcFormatException(
            String.format(
                "LZ4 frame: content size %d, but the buffer declares %d bytes",
                contentSize, declared));
      }
      at += 8;
    }
    if ((flg & FLG_DICTIONARY_ID) != 0) {
      throw new IpcFormatException("LZ4 frame: needs a dictionary, which Arrow IPC has none of");
    }
    FrameChecks.require(src, at, 1, FRAME, "its header checksum");
    int headerChecksum = (XXHASH.hash(src, 4, at - 4, 0) >>> 8) & 0xFF;
    if ((src.get(at) & 0xFF) != headerChecksum) {
      throw new IpcFormatException(
          String.format(
              "LZ4 frame: header checksum 0x%02X, 0x%02X computed",
              src.get(at) & 0xFF, headerChecksum));
    }
    at++;

    boolean blockChecksums = (flg & FLG_BLOCK_CHECKSUM) != 0;
    boolean linked = (flg & FLG_BLOCK_INDEPENDENCE) == 0;
    LZ4SafeDecompressor decompressor = SafeLz4.decompressor();
    int written = 0;
    for (int block = 0; ; block++) {
      FrameChecks.require(src, at, 4, FRAME, "block " + block + "'s size");
      int word = src.getInt(at);
      at += 4;
      if (word == 0) {
        break;
      }
      boolean stored = (word & UNCOMPRESSED_BLOCK) != 0;
      int size = word & ~UNCOMPRESSED_BLOCK;
      if (size > blockMaximum) {
        throw new IpcFormatException(
            String.format(
                "LZ4 frame: block %d claims %d bytes; the frame's blocks hold at most %d",
                block, size, blockMaximum));
      }
      FrameChecks.require(src, at, size + (blockChecksums ? 4L : 0L), FRAME, "block " + block);
      if (blockChecksums) {
        int expected = src.getInt(at + size);
        int actual = XXHASH.hash(src, at, size, 0);
        if (expected != actual) {
          throw new IpcFormatException(
              String.format(
                  "LZ4 frame: block %d checksum 0x%08X, 0x%08X computed", block, expected, actual));
        }
      }
      int room = Math.min(blockMaximum, declared - written);
      if (stored) {
        if (size > room) {
          throw new IpcFormatException(
              String.format(
                  "LZ4 frame: block %d stores %d bytes, more than the %d bytes left of %d declared",
                  block, size, room, declared));
        }
        copy(src, at, out, written, size);
        written += size;
      } else {
        int decoded;
        try {
          decoded =
              linked && written > 0
                  ? decodeLinked(decompressor, src, at, size, out, written, room, block)
                  : decompressor.decompress(src, at, size, out, written, room);
        } catch (LZ4Exception e) {
          throw new IpcFormatException(
              String.format(
                  "LZ4 frame: block %d does not decompress into the %d bytes left of %d declared",
                  block, room, declared),
              e);
        }
        written += decoded;
      }
      at += size + (blockChecksums ? 4 : 0);
    }
    if ((flg & FLG_CONTENT_CHECKSUM) != 0) {
      FrameChecks.require(src, at, 4, FRAME, "its content checksum");
      int expected = src.getInt(at);
      int actual = XXHASH.hash(out, 0, written, 0);
      if (expected != actual) {
        throw new IpcFormatException(
            String.format("LZ4 frame: content checksum 0x%08X, 0x%08X computed", expected, actual));
      }
      at += 4;
    }
    if (written != declared) {
      throw new IpcFormatException(
          String.format("LZ4 frame holds %d bytes, but the buffer declares %d", written, declared));
    }
    if (at != end) {
      throw new IpcFormatException(
          String.format("LZ4 frame ends at byte %d of the buffer's %d", at, end));
    }
  }

  /**
   * Decodes a block of a linked frame, whose matches may reach back into the {@link #LINK_WINDOW}
   * bytes decoded before it. The safe decompressor refuses a match before the start of its output,
   * and lz4-java has no decompression with a dictionary; so the block is rewritten with those bytes
   * prepended to its first literal run (a block is literals then a match, so only the first token's
   * literal length changes), decoded into a scratch array, and its own bytes copied out. The
   * decoder's checks are unchanged: a match reaching past the window is still refused.
   *
   * @return the bytes the block decoded to, at most {@code room}
   */
  private static int decodeLinked(
      LZ4SafeDecompressor decompressor,
      ByteBuffer src,
      int at,
      int size,
      ByteBuffer out,
      int written,
      int room,
      int block)
      throws IpcFormatException {
    int end = at + size;
    int p = at;
    if (size < 1) {
      throw new IpcFormatException("LZ4 frame: block " + block + " is empty");
    }
    int token = src.get(p++) & 0xFF;
    long literals = (long) (token >>> 4);
    if (literals == 15) {
      int more;
      do {
        if (p >= end) {
          throw new IpcFormatException(
              "LZ4 frame: block " + block + " ends inside its first literal length");
        }
        more = src.get(p++) & 0xFF;
        literals += more;
      } while (more == 255);
    }
    if (literals > end - p) {
      throw new IpcFormatException(
          String.format(
              "LZ4 frame: block %d's first %d literals run past its %d bytes",
              block, literals, size));
    }
    int window = Math.min(written, LINK_WINDOW);
    long merged = window + literals;
    int lengthBytes = merged < 15 ? 0 : (int) ((merged - 15) / 255 + 1);
    byte[] rewritten = new byte[1 + lengthBytes + window + (end - p)];
    int w = 0;
    rewritten[w++] = (byte) ((Math.min(merged, 15) << 4) | (token & 0x0F));
    if (merged >= 15) {
      long rest = merged - 15;
      for (; rest >= 255; rest -= 255) {
        rewritten[w++] = (byte) 255;
      }
      rewritten[w++] = (byte) rest;
    }
    out.duplicate().position(written - window).limit(written).slice().get(rewritten, w, window);
    w += window;
    src.duplicate().position(p).limit(end).slice().get(rewritten, w, end - p);
    byte[] scratch = new byte[window + room];
    int decoded =
        decompressor.decompress(rewritten, 0, rewritten.length, scratch, 0, scratch.length);
    int own = decoded - window;
    ByteBuffer target = out.duplicate();
    target.position(written);
    target.put(scratch, window, own);
    return own;
  }

  /** {@code ByteBuffer.put(int, ByteBuffer, int, int)}, which Java 11 does not have. */
  private static void copy(ByteBuffer from, int at, ByteBuffer to, int into, int length) {
    ByteBuffer source = from.duplicate();
    source.limit(at + length).position(at);
    ByteBuffer target = to.duplicate();
    target.position(into);
    target.put(source);
  }

  /** The native XXH32 where lz4-java has its library; the array-checked Java one otherwise. */
  private static XXHash32 chooseHash() {
    try {
      return XXHashFactory.nativeInstance().hash32();
    } catch (LinkageError | AssertionError | RuntimeException e) {
      return XXHashFactory.safeInstance().hash32();
    }
  }
}
