#if canImport(Glibc)
import Glibc
#endif

/// This process's CPU time and context switches (getrusage, all threads), and differences of them.
struct ResourceUsage {
    var userSeconds: Double
    var systemSeconds: Double
    /// Voluntary (a thread waited) and involuntary (a thread was preempted) switches.
    var contextSwitches: Int

    var cpuSeconds: Double { userSeconds + systemSeconds }

    static func now() -> ResourceUsage {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ResourceUsage(
            userSeconds: seconds(usage.ru_utime),
            systemSeconds: seconds(usage.ru_stime),
            contextSwitches: usage.ru_nvcsw + usage.ru_nivcsw
        )
    }

    static func - (after: ResourceUsage, before: ResourceUsage) -> ResourceUsage {
        ResourceUsage(
            userSeconds: after.userSeconds - before.userSeconds,
            systemSeconds: after.systemSeconds - before.systemSeconds,
            contextSwitches: after.contextSwitches - before.contextSwitches
        )
    }
}
