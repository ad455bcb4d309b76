package dev.quiver.broadcast;

/** The part a task opening a broadcast plays, given what it finds for it. */
enum Arrival {
  /** Nothing there: it decodes, for itself and the tasks that arrive meanwhile. */
  DECODE,
  /** Another task is decoding it: it waits, then reads it (or decodes for itself). */
  WAIT,
  /** Decoded, and held by other tasks: it reads it. */
  READ_SHARED,
  /** Idle and retained: it reads it, holding it again. */
  READ_RETAINED;

  /** The part a task opening the listed {@code entry} plays. */
  static Arrival at(CacheEntry entry) {
    DecodedBroadcastCache.State state = entry.state();
    switch (state) {
      case DECODING:
        return WAIT;
      case SHARED:
        return READ_SHARED;
      case RETAINED:
        return READ_RETAINED;
      default:
        // PRIVATE, FAILED and RELEASED entries are no longer listed.
        throw new IllegalStateException(
            "broadcast " + entry.broadcastId + ": a listed entry is " + state);
    }
  }
}
