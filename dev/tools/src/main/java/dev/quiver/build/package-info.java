/**
 * The supported-versions generator behind {@code dev/versions}, JDK only. It owns the reading of
 * pom.xml's {@code spark-*} profiles, the one source of the supported versions ({@link
 * dev.quiver.build.SupportedVersions}), and every copy written from them ({@link
 * dev.quiver.build.VersionList}): the README's table, the workflows' matrices, dev/test-matrix's
 * profiles, the shim modules' descriptions and the shim loader's list. Its test fails the build
 * when one of them is out of date; the Spark suites read the lines through it too.
 */
package dev.quiver.build;
