import AuthRPCTransport
import Foundation
import TestSupport
import Testing

/// A stream submitted on its caller's thread while the connection's I/O thread sleeps
/// (ConnectionLoop+SessionLoan), against the Python `h2` fault server. Each case first waits until
/// the thread lends its session, so the call under test is certainly a loan, and checks that it
/// was.
@Suite("Streams written from the caller's thread while the I/O thread sleeps")
struct SessionLoanTests {
    /// Waits (bounded) until the connection's I/O thread sleeps and lends its session.
    private static func untilLending(_ connection: HTTP2Connection) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !connection.lendsSession {
            guard ContinuousClock.now < deadline else {
                Issue.record("the I/O thread never lent its session")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test("a call that finds the connection idle is written by its caller and answered, call after call")
    func idleCalls() async throws {
        let connection = try await FaultPeer.connect()
        let before = connection.sessionLoans
        for index in 0..<5 {
            try await Self.untilLending(connection)
            let message = Array("call \(index)".utf8)
            let response = try await connection.send(FaultPeer.request("Echo", message: message))
            #expect(response.status == 200)
            #expect(response.body == FaultPeer.frame(message))
        }
        #expect(connection.sessionLoans == before + 5)
    }

    @Test(
        "a borrowed stream's deadline wakes the sleeping I/O thread: the call ends at its deadline, reset with CANCEL",
        .timeLimit(.minutes(1))
    )
    func deadlineWakesTheThread() async throws {
        let connection = try await FaultPeer.connect()
        try await Self.untilLending(connection)
        let before = connection.sessionLoans
        let tag = FaultPeer.newTag()
        let start = ContinuousClock.now
        await #expect(throws: TransportFailure.deadlineExceeded) {
            try await connection.send(FaultPeer.request("Hang", tag: tag, deadline: .now + .milliseconds(300)))
        }
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(connection.sessionLoans == before + 1)
        let events = try await FaultPeer.events(tag: tag, on: connection) { FaultPeer.hasReset($0, code: 8) }
        #expect(FaultPeer.hasReset(events, code: 8), "\(events)")
    }

    @Test(
        "a keepalive that falls due while a borrowed stream waits still goes out, and an unanswered one ends the connection",
        .timeLimit(.minutes(1))
    )
    func keepaliveOnALoan() async throws {
        let silent = try await FaultPeer.connect("h2c_no_ping_ack") {
            $0.keepaliveInterval = .milliseconds(100)
            $0.keepaliveTimeout = .milliseconds(300)
        }
        try await Self.untilLending(silent)
        await #expect(throws: TransportFailure.keepaliveTimeout) { try await silent.send(FaultPeer.request("Hang")) }
        #expect(silent.sessionLoans == 1)
        #expect(!silent.isAcceptingStreams)
    }

    @Test("a borrowed body larger than one write is finished by the I/O thread, and comes back whole")
    func largeBodyOnALoan() async throws {
        let connection = try await FaultPeer.connect()
        try await Self.untilLending(connection)
        let before = connection.sessionLoans
        let message = [UInt8](repeating: 0x6C, count: 8 << 20)
        let response = try await connection.send(
            FaultPeer.request("Echo", message: message, deadline: .now + .seconds(30))
        )
        #expect(connection.sessionLoans == before + 1)
        #expect(response.body.count == message.count + 5)
        #expect(response.body.dropFirst(5).allSatisfy { $0 == 0x6C })
    }

    @Test("calls that arrive together at an idle connection: one borrows, the rest queue, and every one is answered")
    func burstsAtAnIdleConnection() async throws {
        let connection = try await FaultPeer.connect()
        let before = connection.sessionLoans
        for round in 0..<20 {
            try await Self.untilLending(connection)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let message = Array("round \(round) call \(index)".utf8)
                        let response = try await connection.send(FaultPeer.request("Echo", message: message))
                        #expect(response.body == FaultPeer.frame(message))
                    }
                }
                try await group.waitForAll()
            }
        }
        let loans = connection.sessionLoans - before
        #expect(loans >= 20 && loans <= 160, "\(loans) loans")
        #expect(await connection.footprint() == HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0))
    }
}
