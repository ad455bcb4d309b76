package dev.quiver.codec;

import dev.quiver.annotation.Internal;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * The one lz4 decompressor Quiver hands untrusted bytes to, for Spark's lz4 framing and for the LZ4
 * frames of shuffle blocks alike.
 *
 * <p>Only a safe decompressor: lz4-java's fast decompressor trusts the decompressed length and
 * reads past its input on hostile bytes (CVE-2025-12183, lz4-java 1.8.0: a JVM crash in {@code
 * LZ4_decompress_fast}).
 *
 * <p>Of the safe ones on 1.8.0, the JNI instance: it checks both array ranges before the native
 * call, and liblz4's {@code LZ4_decompress_safe} stays inside them and refuses a match reaching
 * before the output's start. Not {@code fastestInstance()}: when lz4-java is not on the system
 * class path that gives the {@code sun.misc.Unsafe} Java instance, whose out-of-range accesses on
 * hostile bytes are the same CVE's and are not bounds-checked. Without the native library, the
 * pure-Java safe instance: every access is array-checked, so hostile bytes end in an exception; it
 * may copy stale bytes of the output array into a block (CVE-2025-66566), which the block's
 * checksum then catches unless the writer knew those bytes.
 */
@Internal
public final class SafeLz4 {

  private static final LZ4SafeDecompressor DECOMPRESSOR = choose();

  private SafeLz4() {}

  /** The safest lz4 decompressor this JVM has. */
  public static LZ4SafeDecompressor decompressor() {
    return DECOMPRESSOR;
  }

  private static LZ4SafeDecompressor choose() {
    try {
      return LZ4Factory.nativeInstance().safeDecompressor();
    } catch (LinkageError | AssertionError | RuntimeException e) {
      // No native library for this platform (lz4-java then fails its JNI classes' loading).
      return LZ4Factory.safeInstance().safeDecompressor();
    }
  }
}
