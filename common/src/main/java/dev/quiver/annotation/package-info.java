/**
 * The annotations that state Quiver's API: {@link dev.quiver.annotation.Public} and {@link
 * dev.quiver.annotation.Internal}.
 */
package dev.quiver.annotation;
