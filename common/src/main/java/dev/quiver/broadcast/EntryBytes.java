package dev.quiver.broadcast;

/** An entry's bytes by where they live, as taken at one moment. */
final class EntryBytes {

  static final EntryBytes NONE = new EntryBytes(0, 0, 0);

  private final long heap;
  private final long arrow;
  private final long nativeBytes;

  EntryBytes(long heap, long arrow, long nativeBytes) {
    this.heap = heap;
    this.arrow = arrow;
    this.nativeBytes = nativeBytes;
  }

  long in(MemoryLocation location) {
    switch (location) {
      case JVM_HEAP:
        return heap;
      case ARROW:
        return arrow;
      case NATIVE:
        return nativeBytes;
      default:
        throw new AssertionError(location);
    }
  }

  long total() {
    return heap + arrow + nativeBytes;
  }

  /**
   * Takes every location's bytes from {@code memory}, all or none.
   *
   * @return whether they were taken
   */
  boolean acquireFrom(StorageMemory memory, long broadcastId) {
    MemoryLocation[] locations = MemoryLocation.values();
    for (int i = 0; i < locations.length; i++) {
      long bytes = in(locations[i]);
      if (bytes > 0 && !memory.tryAcquire(broadcastId, bytes, locations[i])) {
        for (int j = 0; j < i; j++) {
          long taken = in(locations[j]);
          if (taken > 0) {
            memory.release(broadcastId, taken, locations[j]);
          }
        }
        return false;
      }
    }
    return true;
  }

  /** Gives back to {@code memory} what {@link #acquireFrom} took. */
  void releaseTo(StorageMemory memory, long broadcastId) {
    for (MemoryLocation location : MemoryLocation.values()) {
      long bytes = in(location);
      if (bytes > 0) {
        memory.release(broadcastId, bytes, location);
      }
    }
  }

  @Override
  public String toString() {
    return total() + " bytes (" + arrow + " Arrow, " + heap + " heap, " + nativeBytes + " native)";
  }
}
