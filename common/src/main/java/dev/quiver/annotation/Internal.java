package dev.quiver.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a class that is {@code public} only because Quiver's own code in another package uses it.
 * It is not API (see {@link Public}) and may change or go in any release.
 *
 * <p>On a constructor or method of a {@link Public} class, it marks that member alone as internal:
 * a Scala class's constructor that only Quiver calls, say. Such members are left out of the API's
 * signature checks.
 */
@Public
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.CONSTRUCTOR, ElementType.METHOD})
public @interface Internal {}
