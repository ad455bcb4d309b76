package dev.quiver.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks Quiver's API: a class or interface carrying it is meant to be used by engines and jobs, and
 * changes to it follow the project's compatibility rules (documented in {@code docs/api.md}).
 *
 * <p>Anything without it is internal, even when it is {@code public} (Java and Scala need that for
 * code shared across packages): it may change or go in any release. Public classes that are not API
 * say so with {@link Internal}, so that forgetting either is caught by a test.
 */
@Public
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Public {}
