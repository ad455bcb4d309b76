package dev.quiver.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The tool declares jackson-core itself (per profile, in its pom); Arrow brings jackson-databind.
 * The two must be one Jackson release, the one Arrow was built with.
 */
class JacksonVersionTest {

  @Test
  void jacksonCoreIsTheReleaseArrowBrings() {
    assertEquals(
        com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString(),
        com.fasterxml.jackson.core.json.PackageVersion.VERSION.toString(),
        "tools.jackson.version in dev/tools/pom.xml differs from the Jackson of this profile's"
            + " Arrow (mvn dependency:tree -pl common -Dincludes=com.fasterxml.jackson.core)");
  }
}
