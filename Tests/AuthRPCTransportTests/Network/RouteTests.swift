import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@Suite("Connecting to given addresses: unix-domain sockets, IP lists")
struct RouteTests {
    private func echo(_ connection: HTTP2Connection, _ text: String) async throws -> String {
        let response = try await connection.send(FaultPeer.request("Echo", message: Array(text.utf8)))
        return String(decoding: response.body.dropFirst(5), as: UTF8.self)
    }

    @Test("a unix-domain socket path carries HTTP/2 (h2c) to the fault server")
    func unixPath() async throws {
        let faults = try await Peers.faultServer()
        let address = try SocketAddress(unixPath: faults.unixPath)
        #expect(address.description == "unix:\(faults.unixPath)")
        let connection = try await HTTP2Connection.connect(
            via: .addresses([address]),
            serverName: "localhost",
            configuration: HTTP2ConnectionConfiguration()
        )
        defer { connection.close() }
        #expect(try await echo(connection, "over a unix socket") == "over a unix socket")
    }

    #if os(Linux)
    @Test("an abstract unix socket name carries HTTP/2 to the fault server")
    func abstractName() async throws {
        let faults = try await Peers.faultServer()
        let address = try SocketAddress(abstractUnixName: faults.abstractUnixName)
        #expect(address.description == "unix-abstract:\(faults.abstractUnixName)")
        let connection = try await HTTP2Connection.connect(
            via: .addresses([address]),
            serverName: "localhost",
            configuration: HTTP2ConnectionConfiguration()
        )
        defer { connection.close() }
        #expect(try await echo(connection, "abstract") == "abstract")
    }
    #endif

    @Test("a unix socket path where nothing listens fails as refused, naming the path")
    func unixNothingThere() async throws {
        let path = "/tmp/authrpc-no-such-\(UInt32.random(in: 0...UInt32.max)).sock"
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                via: .addresses([try SocketAddress(unixPath: path)]),
                serverName: "localhost",
                configuration: HTTP2ConnectionConfiguration()
            )
        }
        guard case .connectFailed(_, let reason, let kind)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(kind == .refused)
        #expect(reason.contains(path), "\(reason)")
    }

    @Test("unusable addresses are refused when they are made, never at connect time")
    func invalidAddresses() {
        let longest = String(repeating: "p", count: SocketAddress.maximumUnixPathLength)
        #expect(throws: Never.self) { try SocketAddress(unixPath: "/" + longest.dropFirst()) }
        for bad in ["", "/tmp/a\u{0}b", "/" + longest] {
            let error = #expect(throws: TransportFailure.self) { try SocketAddress(unixPath: bad) }
            guard case .invalidAddress(let reason)? = error else {
                Issue.record("\(bad.count) bytes: got \(String(describing: error))")
                continue
            }
            #expect(!reason.isEmpty)
        }
        #if os(Linux)
        #expect(throws: TransportFailure.self) { try SocketAddress(abstractUnixName: longest + "x") }
        #endif
        for bad in ["localhost", "1.2.3", "::g", "1.2.3.4\u{1b}[2J"] {
            let error = #expect(throws: TransportFailure.self) { try SocketAddress(ipAddress: bad, port: 443) }
            #expect(error?.description.contains("\u{1b}") == false)
        }
        #expect(throws: TransportFailure.self) { try SocketAddress(ipAddress: "127.0.0.1", port: 70000) }
        #expect((try? SocketAddress(ipAddress: "::1", port: 443))?.description == "[::1]:443")
    }

    @Test("a list of addresses: those that refuse are passed over, the one that answers is used")
    func addressList() async throws {
        let faults = try await Peers.faultServer()
        let closed = Ports.closed()
        let addresses = [
            try SocketAddress(ipAddress: "127.0.0.1", port: closed),
            try SocketAddress(ipAddress: "::1", port: closed),
            try SocketAddress(ipAddress: faults.host, port: faults.port("h2c")),
        ]
        let connection = try await HTTP2Connection.connect(
            via: .addresses(addresses),
            serverName: faults.host,
            configuration: HTTP2ConnectionConfiguration()
        )
        defer { connection.close() }
        #expect(try await echo(connection, "third time") == "third time")
    }

    @Test("when every address refuses, the error names each one")
    func everyAddressRefuses() async throws {
        let closed = Ports.closed()
        let error = await #expect(throws: TransportFailure.self) {
            try await HTTP2Connection.connect(
                via: .addresses([
                    try SocketAddress(ipAddress: "127.0.0.1", port: closed),
                    try SocketAddress(ipAddress: "::1", port: closed),
                ]),
                serverName: "localhost",
                configuration: HTTP2ConnectionConfiguration()
            )
        }
        guard case .connectFailed(_, let reason, let kind)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(kind == .refused || kind == .other, "\(reason)")
        #expect(reason.contains("127.0.0.1:\(closed)"), "\(reason)")
        #expect(reason.contains("[::1]:\(closed)"), "\(reason)")
    }
}
