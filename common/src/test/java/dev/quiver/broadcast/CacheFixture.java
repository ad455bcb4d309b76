package dev.quiver.broadcast;

import static dev.quiver.broadcast.CacheTestSupport.TIMEOUT_SECONDS;
import static dev.quiver.broadcast.CacheTestSupport.assertHoldsNothing;

import dev.quiver.testing.AllocatorExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The fixture of the broadcast cache tests, as a JUnit extension. Each test gets, in the parameters
 * of its method and of its {@code @BeforeEach} and {@code @AfterEach} methods, by type:
 *
 * <ul>
 *   <li>{@link BufferAllocator}: its allocator, named and limited as {@link AllocatorExtension}
 *       gives it;
 *   <li>{@link ScriptedDecoder}: its decoder;
 *   <li>{@link DecodedBroadcastCache}: a cache over both, with no entry limit and no retention;
 *   <li>{@link Caches}: for any other cache over its allocator;
 *   <li>{@link ExecutorService}: threads for the tasks that must block.
 * </ul>
 *
 * After each test, in this order: the decoder's gates are released, the threads are stopped (and
 * must stop), every cache made for the test must hold nothing and is closed, and the allocator must
 * be back at zero bytes with no child allocator open. Each step runs even when one before it
 * failed; a failure of the test itself comes first, with the fixture's attached to it.
 *
 * <p>The cache test classes take them through {@link CacheTestBase}.
 */
final class CacheFixture implements BeforeEachCallback, AfterEachCallback, ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(CacheFixture.class);

  /** The types of the parts a test can be given. */
  private static final List<Class<?>> PARTS =
      List.of(
          BufferAllocator.class,
          ScriptedDecoder.class,
          DecodedBroadcastCache.class,
          Caches.class,
          ExecutorService.class);

  /** One test's parts, made as the test asks for them, and its caches. */
  static final class Caches {
    private final AllocatorExtension.TestAllocator allocator;
    private final ScriptedDecoder decoder = new ScriptedDecoder();
    private final List<DecodedBroadcastCache> made = new ArrayList<>();
    private DecodedBroadcastCache standard;
    private ExecutorService executor;

    private Caches(AllocatorExtension.TestAllocator allocator) {
      this.allocator = allocator;
    }

    /** A cache over the test's allocator and decoder, retaining as {@code retention} allows. */
    DecodedBroadcastCache with(Retention retention) {
      return make(decoder, Long.MAX_VALUE, retention);
    }

    /** A cache over the test's allocator with another decoder and entry limit, no retention. */
    DecodedBroadcastCache with(BroadcastDecoder<?> otherDecoder, long maxEntryBytes) {
      return make(otherDecoder, maxEntryBytes, Retention.disabled());
    }

    private DecodedBroadcastCache make(
        BroadcastDecoder<?> withDecoder, long maxEntryBytes, Retention retention) {
      DecodedBroadcastCache cache =
          new DecodedBroadcastCache(allocator.allocator(), withDecoder, maxEntryBytes, retention);
      made.add(cache);
      return cache;
    }

    BufferAllocator allocator() {
      return allocator.allocator();
    }

    ScriptedDecoder decoder() {
      return decoder;
    }

    /** The test's cache: over its allocator and decoder, no entry limit, no retention. */
    DecodedBroadcastCache cache() {
      if (standard == null) {
        standard = with(Retention.disabled());
      }
      return standard;
    }

    ExecutorService executor() {
      if (executor == null) {
        executor = Executors.newCachedThreadPool();
      }
      return executor;
    }

    /** The part of type {@code type}, one of {@link #PARTS}. */
    private Object part(Class<?> type) {
      if (type == BufferAllocator.class) {
        return allocator();
      } else if (type == ScriptedDecoder.class) {
        return decoder();
      } else if (type == DecodedBroadcastCache.class) {
        return cache();
      } else if (type == ExecutorService.class) {
        return executor();
      }
      return this;
    }

    /** The end of the test; see the class comment. */
    private void finish() {
      List<Throwable> failures = new ArrayList<>();
      attempt(failures, decoder::releaseAll);
      if (executor != null) {
        attempt(failures, this::stopThreads);
      }
      for (DecodedBroadcastCache cache : made) {
        attempt(failures, () -> assertHoldsNothing(cache));
        attempt(failures, cache::close);
      }
      attempt(failures, allocator::closeAndCheck);
      if (!failures.isEmpty()) {
        Throwable first = failures.get(0);
        for (Throwable other : failures.subList(1, failures.size())) {
          first.addSuppressed(other);
        }
        if (first instanceof Error) {
          throw (Error) first;
        }
        throw (RuntimeException) first;
      }
    }

    private void stopThreads() throws InterruptedException {
      executor.shutdownNow();
      if (!executor.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new AssertionError("the test's threads did not stop");
      }
    }

    private interface Step {
      void run() throws Exception;
    }

    private static void attempt(List<Throwable> failures, Step step) {
      try {
        step.run();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failures.add(new AssertionError("interrupted", e));
      } catch (RuntimeException | Error e) {
        failures.add(e);
      } catch (Exception e) {
        failures.add(new AssertionError(e));
      }
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    context.getStore(NAMESPACE).put(Caches.class, new Caches(AllocatorExtension.openFor(context)));
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return PARTS.contains(parameter.getParameter().getType());
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Caches caches = context.getStore(NAMESPACE).get(Caches.class, Caches.class);
    if (caches == null) {
      throw new ParameterResolutionException(
          "the cache fixture gives its parts per test; "
              + parameter.getDeclaringExecutable()
              + " runs outside a test");
    }
    return caches.part(parameter.getParameter().getType());
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Caches caches = context.getStore(NAMESPACE).remove(Caches.class, Caches.class);
    if (caches != null) {
      caches.finish();
    }
  }
}
