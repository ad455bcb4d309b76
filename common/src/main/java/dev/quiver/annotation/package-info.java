/**
 * The annotations that state Quiver's API. {@link dev.quiver.annotation.Public} marks what engines
 * and jobs may use, under the compatibility rules of {@code docs/api.md}; {@link
 * dev.quiver.annotation.Internal} marks what is {@code public} only because Quiver's own code in
 * another package needs it, and may change in any release. Every public top-level class under
 * {@code dev.quiver} carries one of the two, and a test holds that and {@code docs/api.md} to each
 * other. Both are kept at run time, for that test; neither changes how a class behaves.
 */
package dev.quiver.annotation;
