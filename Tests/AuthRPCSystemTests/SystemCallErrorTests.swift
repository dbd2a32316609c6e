import AuthRPCSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("SystemCallError")
struct SystemCallErrorTests {
    @Test("names the call and the OS's reason in words")
    func description() {
        #expect(SystemCallError("connect", errno: ECONNREFUSED).description == "connect failed: connection refused")
        #expect(SystemCallError("open", errno: ENOENT).description == "open failed: no such file or directory")
    }
}
