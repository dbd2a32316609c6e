import AuthRPC
import Foundation
import TestSupport
import Testing

/// Which thread runs a piece of code: its OS name and its kernel thread id (not reused while the
/// test runs, unlike a `pthread_t`).
private struct RunningThread: Equatable, CustomStringConvertible {
    let name: String
    let id: String

    static var current: RunningThread {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
        return RunningThread(name: name.trimmingCharacters(in: .newlines), id: String(stat.prefix { $0 != " " }))
    }

    /// A connection's I/O thread.
    var isConnectionThread: Bool { name == "authrpc-h2" }

    var description: String { "\(name) (thread \(id))" }
}

/// A response message as a deserializer saw it: where its bytes lay, their first byte, and the
/// bytes themselves when the deserializer was told to keep them.
private struct SeenBytes: Sendable {
    let address: UInt
    let first: UInt8?
    let kept: ArraySlice<UInt8>?
}

/// Reads where the message's bytes lie, without copying them; keeps them when `keep` is set.
private struct AddressingDeserializer: MessageDeserializer {
    let keep: Bool

    func deserialize(_ bytes: ArraySlice<UInt8>) throws -> SeenBytes {
        SeenBytes(
            address: bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) },
            first: bytes.first,
            kept: keep ? bytes : nil
        )
    }
}

@Suite("Calls from tasks that prefer the channel's executor")
struct ChannelExecutorTests {
    @Test("a task that prefers the executor is resumed on the connection's own thread; without it, on the shared pool")
    func resumedOnTheConnectionThread() async throws {
        let channel = try await FaultChannel.make()
        defer { channel.close() }
        let (first, second) = try await withTaskExecutorPreference(channel.executor) {
            let first = try await FaultChannel.call(channel, "Echo")
            let afterFirst = RunningThread.current
            let second = try await FaultChannel.call(channel, "Echo")
            let afterSecond = RunningThread.current
            #expect(first.message == Array("hello".utf8) && second.message == Array("hello".utf8))
            return (afterFirst, afterSecond)
        }
        #expect(first.isConnectionThread, "\(first)")
        #expect(second == first)
        _ = try await FaultChannel.call(channel, "Echo")
        let unpreferred = RunningThread.current
        #expect(!unpreferred.isConnectionThread, "\(unpreferred)")
    }

    @Test("large responses answered on the connection's thread reuse one buffer; bytes a caller kept stay intact")
    func largeResponsesReuseOneBuffer() async throws {
        let channel = try await FaultChannel.make()
        defer { channel.close() }
        func echo(_ byte: UInt8, keep: Bool = false) async throws -> SeenBytes {
            try await channel.unary(
                FaultChannel.method("Echo"),
                request: [UInt8](repeating: byte, count: 1 << 20),
                serializer: RawBytesCodec(),
                deserializer: AddressingDeserializer(keep: keep)
            ).message
        }
        let (first, second, kept, afterKept) = try await withTaskExecutorPreference(channel.executor) {
            _ = try await FaultChannel.call(channel, "Echo")
            return (try await echo(1), try await echo(2), try await echo(3, keep: true), try await echo(4))
        }
        #expect([first.first, second.first, kept.first, afterKept.first] == [1, 2, 3, 4])
        // The second response grew in the first one's storage.
        #expect(second.address == first.address)
        // The third one's bytes were held, so the fourth had to grow elsewhere and left them as they were.
        #expect(afterKept.address != kept.address)
        #expect(kept.kept.map(Array.init) == [UInt8](repeating: 3, count: 1 << 20))
    }

    @Test("200 concurrent calls from child tasks that inherit the preference all succeed on the one connection thread")
    func manyInFlight() async throws {
        let channel = try await FaultChannel.make()
        defer { channel.close() }
        let threads = try await withTaskExecutorPreference(channel.executor) {
            // Connected first: until a connection is ready the executor runs jobs on the shared
            // pool, and a task that starts there keeps running there when its answer comes in
            // before it suspends (the continuation, already resumed, does not hop). A loaded
            // machine under AddressSanitizer made that race for 2 of the 200 calls.
            _ = try await FaultChannel.call(channel, "Echo")
            return try await withThrowingTaskGroup(of: RunningThread.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let message = Array("call \(index)".utf8)
                        let response = try await FaultChannel.call(channel, "Echo", message: message)
                        #expect(response.message == message)
                        return RunningThread.current
                    }
                }
                var threads: [RunningThread] = []
                for try await thread in group { threads.append(thread) }
                return threads
            }
        }
        #expect(threads.count == 200)
        #expect(threads.allSatisfy { $0.isConnectionThread }, "\(Set(threads.map(\.description)))")
        // One connection, so one thread.
        #expect(Set(threads.map(\.id)).count == 1, "\(Set(threads.map(\.description)))")
    }

    @Test("a deadline that passes and a cancelled call both answer the waiting task on the connection's thread")
    func deadlineAndCancelOnTheConnectionThread() async throws {
        let channel = try await FaultChannel.make()
        defer { channel.close() }
        try await withTaskExecutorPreference(channel.executor) {
            _ = try await FaultChannel.call(channel, "Echo")
            let expired = await #expect(throws: RPCError.self) {
                try await FaultChannel.call(channel, "Hang", options: CallOptions(timeout: .milliseconds(200)))
            }
            #expect(expired?.code == .deadlineExceeded)
            #expect(RunningThread.current.isConnectionThread, "\(RunningThread.current)")

            let hanging = Task { try await FaultChannel.call(channel, "Hang") }
            try await Task.sleep(for: .milliseconds(100))
            hanging.cancel()
            let cancelled = await #expect(throws: RPCError.self) { try await hanging.value }
            #expect(cancelled?.code == .cancelled)
            // The channel still works, on the same thread.
            _ = try await FaultChannel.call(channel, "Echo")
            #expect(RunningThread.current.isConnectionThread, "\(RunningThread.current)")
        }
    }

    @Test("when the connection is lost, the waiting task carries on, and the next connection's thread takes over")
    func connectionLost() async throws {
        let channel = try await FaultChannel.make()
        defer { channel.close() }
        try await withTaskExecutorPreference(channel.executor) {
            _ = try await FaultChannel.call(channel, "Echo")
            let before = RunningThread.current
            #expect(before.isConnectionThread, "\(before)")
            let lost = await #expect(throws: RPCError.self) {
                try await FaultChannel.call(channel, "CloseAfterRequest")
            }
            #expect(lost?.code == .unavailable)
            // A new connection, so a new thread: jobs moved with it.
            _ = try await FaultChannel.call(channel, "Echo")
            let after = RunningThread.current
            #expect(after.isConnectionThread, "\(after)")
            #expect(after.id != before.id, "\(before) then \(after)")
        }
    }

    @Test("after the channel closes, a task that prefers its executor still runs, on the shared pool")
    func afterClose() async throws {
        let channel = try await FaultChannel.make()
        try await withTaskExecutorPreference(channel.executor) {
            _ = try await FaultChannel.call(channel, "Echo")
            channel.close()
            let refused = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
            #expect(refused?.code == .unavailable)
            // Sleeping means being enqueued again: this only returns if the executor still runs jobs.
            try await Task.sleep(for: .milliseconds(10))
            #expect(!RunningThread.current.isConnectionThread, "\(RunningThread.current)")
        }
    }
}
