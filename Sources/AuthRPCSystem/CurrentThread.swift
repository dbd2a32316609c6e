internal import CPlatform

#if canImport(Darwin)
internal import Darwin
#endif

/// The calling thread, as the operating system sees it.
package enum CurrentThread {
    /// Names the calling thread for `ps`, `top -H`, perf and debuggers. Linux keeps the first 15
    /// bytes. (Foundation's `Thread.name` does not reach the OS on Linux.)
    package static func setName(_ name: String) {
        #if canImport(Glibc)
        cplatform_name_current_thread(name)
        #elseif canImport(Darwin)
        pthread_setname_np(name)
        #endif
    }

    /// The calling thread as a number: the same for as long as the thread lives, and never that
    /// of another live thread. Never 0, so 0 can stand for "no thread yet".
    @inline(__always)
    package static var identity: UInt {
        UInt(cplatform_current_thread())
    }
}
