package dev.quiver.broadcast;

import dev.quiver.annotation.Public;

/**
 * Why the cache freed an idle retained entry; {@link CacheCounters#evictions(Eviction)} counts
 * each.
 */
@Public
public enum Eviction {
  /** To make room for another entry in {@link Retention#maxBytes()}. */
  BUDGET("to make room in the retention budget"),
  /** {@link StorageMemory#underPressure()} said so. */
  PRESSURE("the storage memory is under pressure"),
  /**
   * The broadcast is no longer live ({@link Retention#isLive}, or {@link
   * DecodedBroadcastCache#drop}).
   */
  DROPPED("the broadcast is no longer live"),
  /** {@link DecodedBroadcastCache#close()}. */
  CLOSED("the cache is closed");

  private final String why;

  Eviction(String why) {
    this.why = why;
  }

  /** The cause in words, for the cache's log. */
  String why() {
    return why;
  }
}
