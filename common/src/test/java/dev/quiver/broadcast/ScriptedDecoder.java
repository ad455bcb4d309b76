package dev.quiver.broadcast;

import dev.quiver.codec.StreamCodec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.SequenceInputStream;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;

/**
 * {@link BroadcastDecoder#arrowIpc()}, instrumented: counts its calls, and on chosen calls
 * (numbered from 1 in the order they start) blocks until the test releases it, or fails part way
 * through the bytes, after it has allocated, as a broken fetch would.
 */
final class ScriptedDecoder implements BroadcastDecoder<DecodedBroadcast> {

  /** The failure a scripted call throws; its cause is the real decode failure. */
  static final class InjectedFailure extends IOException {
    private static final long serialVersionUID = 1L;

    InjectedFailure(int call, Throwable cause) {
      super("injected failure of decode call " + call, cause);
    }
  }

  private final CallScript script = new CallScript("decode");
  private final AtomicLong lastFailurePeakBytes = new AtomicLong(-1);
  private volatile long seed;
  private volatile double failureProbability;
  private volatile double slowProbability;
  private volatile long slowMillis;
  private volatile int maxJitterMillis;

  /** Call {@code call} blocks until the returned gate is released. */
  Gate blockCall(int call) {
    return script.block(call);
  }

  /** Call {@code call} fails with {@link InjectedFailure} (after any gate). */
  ScriptedDecoder failCall(int call) {
    script.fail(call);
    return this;
  }

  /**
   * For stress: each call, decided from {@code seed} and its number, fails with probability {@code
   * failure}, takes {@code slowMillis} with probability {@code slow}, and otherwise pauses up to
   * {@code maxJitterMillis}.
   */
  ScriptedDecoder randomly(
      long seed, double failure, double slow, long slowMillis, int maxJitterMillis) {
    this.seed = seed;
    this.failureProbability = failure;
    this.slowProbability = slow;
    this.slowMillis = slowMillis;
    this.maxJitterMillis = maxJitterMillis;
    return this;
  }

  /** Decode calls so far, failed ones included. */
  int calls() {
    return script.calls();
  }

  /** Peak bytes the last injected failure had allocated before it failed; -1 if none failed. */
  long lastFailurePeakBytes() {
    return lastFailurePeakBytes.get();
  }

  /** Releases every gate, so that no decode stays blocked after a test. */
  void releaseAll() {
    script.releaseAll();
  }

  /**
   * These decodes (gates and failures included) in a form that says it cannot be shared ({@link
   * DecodedForm#whyNotShared()}), under a decoder name of its own.
   */
  BroadcastDecoder<DecodedForm> unshareable() {
    return new BroadcastDecoder<DecodedForm>() {
      @Override
      public DecodedForm decode(BroadcastSource source, BufferAllocator allocator)
          throws IOException {
        DecodedBroadcast decoded = ScriptedDecoder.this.decode(source, allocator);
        return new DecodedForm() {
          @Override
          public Optional<String> whyNotShared() {
            return Optional.of("it is the test's own");
          }

          @Override
          public void close() {
            decoded.close();
          }
        };
      }

      @Override
      public String name() {
        return "unshareable";
      }
    };
  }

  /** The form Arrow IPC's decoder makes, and its entries. */
  @Override
  public String name() {
    return BroadcastDecoder.arrowIpc().name();
  }

  @Override
  public DecodedBroadcast decode(BroadcastSource source, BufferAllocator allocator)
      throws IOException {
    int call = script.start();
    script.passGate(call);
    SplittableRandom random = new SplittableRandom(seed * 1_000_003L + call);
    boolean fail = script.fails(call) || random.nextDouble() < failureProbability;
    pause(random);
    if (fail) {
      throw failPartWay(call, source, allocator);
    }
    return BroadcastDecoder.arrowIpc().decode(source, allocator);
  }

  private void pause(SplittableRandom random) throws InterruptedIOException {
    long millis = 0;
    if (random.nextDouble() < slowProbability) {
      millis = slowMillis;
    } else if (maxJitterMillis > 0) {
      millis = random.nextInt(maxJitterMillis + 1);
    }
    if (millis > 0) {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while decoding");
      }
    }
  }

  /** Decodes a copy of the source whose last stream breaks half way, and returns the failure. */
  private InjectedFailure failPartWay(int call, BroadcastSource source, BufferAllocator allocator) {
    if (source.streamCount() == 0) {
      lastFailurePeakBytes.set(0);
      return new InjectedFailure(call, null);
    }
    try {
      DecodedBroadcast unexpected =
          BroadcastDecoder.arrowIpc().decode(new CutSource(source), allocator);
      unexpected.close();
      throw new AssertionError("a cut stream decoded");
    } catch (IOException e) {
      lastFailurePeakBytes.set(allocator.getPeakMemoryAllocation());
      return new InjectedFailure(call, e);
    }
  }

  /** The source with its last stream failing (IOException) half way through its bytes. */
  private static final class CutSource implements BroadcastSource {
    private final BroadcastSource source;

    CutSource(BroadcastSource source) {
      this.source = source;
    }

    @Override
    public long broadcastId() {
      return source.broadcastId();
    }

    @Override
    public int streamCount() {
      return source.streamCount();
    }

    @Override
    public InputStream openStream(int index) throws IOException {
      InputStream in = source.openStream(index);
      if (index < source.streamCount() - 1) {
        return in;
      }
      byte[] bytes = in.readAllBytes();
      in.close();
      int cut = bytes.length / 2;
      InputStream reset =
          new InputStream() {
            @Override
            public int read() throws IOException {
              throw new IOException("connection reset (injected) at byte " + cut);
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
              return read();
            }
          };
      return new SequenceInputStream(new ByteArrayInputStream(bytes, 0, cut), reset);
    }

    @Override
    public StreamCodec codec() {
      return source.codec();
    }
  }
}
