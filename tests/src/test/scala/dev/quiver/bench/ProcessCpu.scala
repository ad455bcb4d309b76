package dev.quiver.bench

import java.lang.management.ManagementFactory

/** The CPU time of this whole process: every JVM thread, and native threads such as Comet's. */
object ProcessCpu {

  def nanos(): Long =
    ManagementFactory.getOperatingSystemMXBean match {
      case os: com.sun.management.OperatingSystemMXBean => os.getProcessCpuTime
      case other => throw new IllegalStateException(s"no process CPU time from $other")
    }
}
