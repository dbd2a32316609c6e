import Testing

@testable import AuthRPCTransport

/// The loop's table of submitted unary streams, without a connection: membership and the slots
/// streams keep.
@Suite("Unary stream table")
struct UnaryStreamTableTests {
    private func stream() -> HTTP2Stream {
        HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
    }

    private func identities(_ streams: [HTTP2Stream]) -> Set<ObjectIdentifier> {
        Set(streams.map(ObjectIdentifier.init))
    }

    @Test("streams come and go in any order; each slot follows its stream, and a stream out keeps none")
    func membership() {
        var table = UnaryStreamTable()
        let streams = (0..<6).map { _ in stream() }
        for stream in streams { table.insert(stream) }
        #expect(table.count == 6)
        #expect(identities(table.streams) == identities(streams))

        // The middle, the last, the first: every position a swap with the last can take.
        for index in [2, 5, 0] {
            let removed = table.remove(streams[index])
            #expect(removed)
            #expect(streams[index].tableSlot == -1)
            #expect(!table.contains(streams[index]))
            let again = table.remove(streams[index])
            #expect(!again, "a stream is taken out once")
        }
        let left = [1, 3, 4].map { streams[$0] }
        #expect(identities(table.streams) == identities(left))
        for stream in left {
            #expect(table.contains(stream))
            #expect(table.streams[stream.tableSlot] === stream)
        }

        // A stream that was never in, or was reset for another exchange, is not found by a stale
        // slot that points at another stream.
        let stranger = stream()
        stranger.tableSlot = 0
        #expect(!table.contains(stranger))
        let removedStranger = table.remove(stranger)
        #expect(!removedStranger)
        #expect(table.count == 3)

        table.removeAll()
        #expect(table.count == 0)
        #expect(left.allSatisfy { $0.tableSlot == -1 })
        table.insert(streams[2])
        #expect(table.contains(streams[2]))
    }

    @Test("random inserts and removals keep the table equal to the set of streams put in")
    func randomOperations() {
        var table = UnaryStreamTable()
        var model: [HTTP2Stream] = []
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            if model.isEmpty || Bool.random(using: &generator) {
                let new = stream()
                table.insert(new)
                model.append(new)
            } else {
                let stream = model.remove(at: Int.random(in: 0..<model.count, using: &generator))
                let removed = table.remove(stream)
                #expect(removed)
            }
            #expect(table.count == model.count)
        }
        #expect(identities(table.streams) == identities(model))
        #expect(model.allSatisfy { table.contains($0) && table.streams[$0.tableSlot] === $0 })
    }
}
