#if canImport(Glibc)
import Glibc
#endif

/// This process's resident memory and open descriptors, from /proc.
enum ProcessMemory {
    /// Resident set size in bytes (/proc/self/statm, second field).
    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Int in
            let count = read(fd, buffer.baseAddress, buffer.count)
            guard count > 0 else { return -1 }
            var field = 0
            var value = 0
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: " ") {
                    if field == 1 { break }
                    field += 1
                    value = 0
                } else if field == 1, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
            }
            return value * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
    }

    /// Open file descriptors (entries of /proc/self/fd, less the one reading it).
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != CChar(bitPattern: UInt8(ascii: ".")) { count += 1 }
        }
        return count - 1
    }
}
