import AuthRPC
import Foundation
import TestSupport
import Testing

/// Whatever ends the connection, a call whose HEADERS reached the server is never sent again:
/// the server records exactly one `headers` event for the call's tag.
///
/// One path no peer can take: a TLS write failure (the error it raises says "not sent"). With
/// a BIO whose writes never fail (`CiphertextBIO`) and renegotiation refused, OpenSSL's SSL_write
/// only fails after a failed read, and a failed read ends the connection first;
/// `tls12_renegotiate`, which sends a PING and a HelloRequest so the client writes into a
/// renegotiation, does not make it fail either. These
/// cases hold the rule that covers it: a stream's "sent" comes from its own state, never from the
/// error that ended the connection.
@Suite("A request the server may have processed is never replayed")
struct NoReplayTests {
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case closeMidStream, closeAfterRequest, resetAfterRequest, goawayThenClose, connectionError, keepaliveTimeout,
            tlsRenegotiation

        var testDescription: String { rawValue }

        /// The fault server's personality and scenario that end the connection this way.
        var peer: (personality: String, scenario: String) {
            switch self {
            case .closeMidStream: ("h2c", "CloseMidStream")
            case .closeAfterRequest: ("h2c", "CloseAfterRequest")
            case .resetAfterRequest: ("h2c", "ResetAfterRequest")
            case .goawayThenClose: ("h2c", "GoawayThenClose")
            case .connectionError: ("h2c", "ConnectionError")
            case .keepaliveTimeout: ("h2c_no_ping_ack", "Hang")
            case .tlsRenegotiation: ("tls12_renegotiate", "Hang")
            }
        }
    }

    private func channel(for ending: Ending) async throws -> Channel {
        let faults = try await Peers.faultServer()
        let target = "\(faults.host):\(faults.port(ending.peer.personality))"
        switch ending {
        case .keepaliveTimeout:
            return try Channel(
                target: target,
                transportSecurity: .plaintext,
                keepalive: Keepalive(interval: .milliseconds(100), timeout: .milliseconds(300))
            )
        case .tlsRenegotiation:
            let sandbox = try await Peers.sandbox()
            return try Channel(
                target: target,
                transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: sandbox.caCertificatePEM)))
            )
        default:
            return try Channel(target: target, transportSecurity: .plaintext)
        }
    }

    @Test("the server sees the call's HEADERS exactly once, whatever ends the connection", arguments: Ending.allCases)
    func neverReplayed(ending: Ending) async throws {
        let observer = try await FaultChannel.make()
        let channel = try await channel(for: ending)
        let tag = FaultChannel.newTag()
        // The deadline only catches a call that waits instead of failing; it is long because the
        // whole suite starts its peers and CLI processes at once on a machine of two cores.
        let options = FaultChannel.tagged(tag, CallOptions(timeout: .seconds(60)))
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, ending.peer.scenario, options: options)
        }
        // Each of these ends the connection, so the call fails fast rather than at its deadline.
        #expect(error?.code != .deadlineExceeded, "\(String(describing: error))")
        switch ending {
        case .tlsRenegotiation:
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("renegotiation") == true, "\(String(describing: error))")
        case .connectionError:
            // The message says what the server did wrong, not just that the connection closed;
            // a protocol violation is internal, never a retryable unavailable.
            #expect(error?.code == .internalError)
            #expect(error?.message.contains("WINDOW_UPDATE") == true, "\(String(describing: error))")
            #expect(error?.message.contains("PROTOCOL_ERROR") == true, "\(String(describing: error))")
        default:
            break
        }
        let events = try await FaultChannel.events(observer, tag: tag) {
            $0.contains { $0["type"] as? String == "connection_closed" }
        }
        let headers = events.filter { $0["type"] as? String == "headers" }
        #expect(headers.count == 1, "\(events)")
    }
}
