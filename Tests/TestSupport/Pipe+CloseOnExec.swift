public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Pipe {
    /// A pipe whose two descriptors close on exec, so that a child another test spawns meanwhile
    /// does not inherit them. Foundation's `Pipe` leaves them open: a long-lived peer spawned
    /// while a test was writing a child's stdin kept that pipe's write end, the child never saw
    /// end of input, and the test run hung for good. The child this pipe is meant for still gets
    /// its end, which `Process` duplicates onto stdin, stdout or stderr (a duplicate is not
    /// marked close-on-exec).
    public static func closedOnExec() -> Pipe {
        let pipe = Pipe()
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            let flags = fcntl(descriptor, F_GETFD)
            precondition(flags >= 0 && fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0, "fcntl(F_SETFD) failed")
        }
        return pipe
    }
}
