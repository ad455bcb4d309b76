package dev.quiver.testing;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test an Arrow allocator of its own, named after the test and limited, and fails the
 * test when the allocator still holds memory (or an open child allocator) once the test and its
 * {@code @AfterEach} methods are done; it is closed either way. Every {@link BufferAllocator}
 * parameter of the test method and of its {@code @BeforeEach} and {@code @AfterEach} methods is the
 * same allocator:
 *
 * <pre>
 * &#64;ExtendWith(AllocatorExtension.class)                  // limit: DEFAULT_LIMIT_BYTES
 * class SomeTest {
 *   &#64;Test
 *   void decodes(BufferAllocator allocator) { ... }
 * }
 *
 * &#64;RegisterExtension                                      // another limit, for the class
 * static final AllocatorExtension ALLOCATOR = AllocatorExtension.withLimit(16 &lt;&lt; 20);
 * </pre>
 *
 * A test's parameterized arguments come first, then the allocator.
 */
public final class AllocatorExtension implements ParameterResolver, AfterEachCallback {

  /**
   * Far above what any test's data needs, far below what the machine has: a length a decoder should
   * have refused then fails the allocation fast instead of taking the JVM's memory.
   */
  public static final long DEFAULT_LIMIT_BYTES = 256L << 20;

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(AllocatorExtension.class);

  private final long limitBytes;

  /** With {@link #DEFAULT_LIMIT_BYTES}; for {@code @ExtendWith}. */
  public AllocatorExtension() {
    this(DEFAULT_LIMIT_BYTES);
  }

  private AllocatorExtension(long limitBytes) {
    if (limitBytes <= 0) {
      throw new IllegalArgumentException("limit " + limitBytes);
    }
    this.limitBytes = limitBytes;
  }

  /** Allocators limited to {@code limitBytes}; for {@code @RegisterExtension}. */
  public static AllocatorExtension withLimit(long limitBytes) {
    return new AllocatorExtension(limitBytes);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == BufferAllocator.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    if (context.getTestMethod().isEmpty()) {
      throw new ParameterResolutionException(
          "AllocatorExtension gives an allocator per test; "
              + parameter.getDeclaringExecutable()
              + " runs outside a test");
    }
    ExtensionContext.Store store = context.getStore(NAMESPACE);
    TestAllocator allocator = store.get(TestAllocator.class, TestAllocator.class);
    if (allocator == null) {
      allocator = TestAllocator.open(nameOf(context), limitBytes);
      store.put(TestAllocator.class, allocator);
    }
    return allocator.allocator();
  }

  /**
   * The allocator this extension would give the test {@code context} runs (named after it, with
   * {@link #DEFAULT_LIMIT_BYTES}), for another extension that gives it out and checks it itself.
   */
  public static TestAllocator openFor(ExtensionContext context) {
    return TestAllocator.open(nameOf(context), DEFAULT_LIMIT_BYTES);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    TestAllocator allocator =
        context.getStore(NAMESPACE).remove(TestAllocator.class, TestAllocator.class);
    if (allocator != null) {
      allocator.closeAndCheck();
    }
  }

  /**
   * {@code Class.method}, plus the display name when it says more than the method's (the arguments
   * of a parameterized test).
   */
  static String nameOf(ExtensionContext context) {
    Method method = context.getRequiredTestMethod();
    String name = context.getRequiredTestClass().getSimpleName() + "." + method.getName();
    String display = context.getDisplayName();
    return display.startsWith(method.getName() + "(") ? name : name + " " + display;
  }

  /** One test's allocator: a child named after the test, under a root of the same limit. */
  public static final class TestAllocator {
    private final RootAllocator root;
    private final BufferAllocator allocator;

    private TestAllocator(RootAllocator root, BufferAllocator allocator) {
      this.root = root;
      this.allocator = allocator;
    }

    static TestAllocator open(String name, long limitBytes) {
      RootAllocator root = new RootAllocator(limitBytes);
      try {
        return new TestAllocator(root, root.newChildAllocator(name, 0, limitBytes));
      } catch (RuntimeException e) {
        root.close();
        throw e;
      }
    }

    public BufferAllocator allocator() {
      return allocator;
    }

    /**
     * Closes the allocator and its root. Fails, naming the allocator, when it still held memory or
     * child allocators, or could not close; Arrow's own refusals to close are attached.
     */
    public void closeAndCheck() {
      long held = allocator.getAllocatedMemory();
      List<String> children = new ArrayList<>();
      for (BufferAllocator child : allocator.getChildAllocators()) {
        children.add(child.getName());
      }
      Collections.sort(children);
      String name = "allocator '" + allocator.getName() + "'";
      AssertionError failure = null;
      if (held != 0) {
        failure =
            new AssertionError(
                name
                    + " still holds "
                    + held
                    + " bytes after the test:\n"
                    + allocator.toVerboseString());
      } else if (!children.isEmpty()) {
        failure =
            new AssertionError(
                name + " still has child allocators " + children + " after the test");
      }
      for (BufferAllocator closing : new BufferAllocator[] {allocator, root}) {
        try {
          closing.close();
        } catch (RuntimeException e) {
          if (failure == null) {
            failure = new AssertionError(name + " did not close after the test", e);
          } else {
            failure.addSuppressed(e);
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
  }
}
