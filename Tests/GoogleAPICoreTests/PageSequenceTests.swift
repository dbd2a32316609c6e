import AuthRPC
import AuthRPCSystem
import GoogleAPICore
import Testing

/// A list request and response of AIP-158's shape.
struct FakeListRequest: Sendable, Equatable {
    var pageToken = ""
    var pageSize: Int32 = 0
}

struct FakeListResponse: Sendable {
    var items: [String]
    var nextPageToken: String
}

/// A list method over fixed pages: the request's token picks the page; every request is kept.
final class FakeListMethod: Sendable {
    let pages: [String: FakeListResponse]
    let failure: RPCError?
    private let seen = Locked<[FakeListRequest]>([])

    init(pages: [String: FakeListResponse], failure: RPCError? = nil) {
        self.pages = pages
        self.failure = failure
    }

    var requests: [FakeListRequest] { seen.withLock { $0 } }

    func sequence(
        _ request: FakeListRequest = FakeListRequest(pageSize: 2)
    ) -> PageSequence<FakeListRequest, FakeListResponse, String> {
        PageSequence(
            request: request,
            options: nil,
            fetch: { request, _ async throws(RPCError) -> FakeListResponse in
                self.seen.withLock { $0.append(request) }
                guard let page = self.pages[request.pageToken] else {
                    throw self.failure ?? RPCError(code: .invalidArgument, message: "unknown page token")
                }
                return page
            },
            setPageToken: { $0.pageToken = $1 },
            nextPageToken: { $0.nextPageToken },
            items: { $0.items }
        )
    }
}

@Suite("Pages of list methods (AIP-158)")
struct PageSequenceTests {
    static let threePages: [String: FakeListResponse] = [
        "": FakeListResponse(items: ["a", "b"], nextPageToken: "t1"),
        "t1": FakeListResponse(items: [], nextPageToken: "t2"),
        "t2": FakeListResponse(items: ["c"], nextPageToken: ""),
    ]

    @Test("Pages follow next_page_token until it is empty; the other request fields stay as given")
    func pages() async throws {
        let method = FakeListMethod(pages: Self.threePages)
        var seen: [[String]] = []
        for try await page in method.sequence() { seen.append(page.items) }
        #expect(seen == [["a", "b"], [], ["c"]])
        #expect(
            method.requests == [
                FakeListRequest(pageToken: "", pageSize: 2), FakeListRequest(pageToken: "t1", pageSize: 2),
                FakeListRequest(pageToken: "t2", pageSize: 2),
            ]
        )
    }

    @Test("Items flatten the pages, skipping empty ones")
    func items() async throws {
        let method = FakeListMethod(pages: Self.threePages)
        var items: [String] = []
        for try await item in method.sequence().items { items.append(item) }
        #expect(items == ["a", "b", "c"])
    }

    @Test("A page is fetched only when the iteration needs it: stopping early makes no further call")
    func lazy() async throws {
        let method = FakeListMethod(pages: Self.threePages)
        let sequence = method.sequence()
        #expect(method.requests.isEmpty)
        var iterator = sequence.items.makeAsyncIterator()
        #expect(try await iterator.next() == "a")
        #expect(try await iterator.next() == "b")
        #expect(method.requests.count == 1)
        #expect(try await iterator.next() == "c")
        #expect(method.requests.count == 3)
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
        #expect(method.requests.count == 3)
    }

    @Test("A request that starts mid-way starts there")
    func startToken() async throws {
        let method = FakeListMethod(pages: Self.threePages)
        var items: [String] = []
        for try await item in method.sequence(FakeListRequest(pageToken: "t1")).items { items.append(item) }
        #expect(items == ["c"])
    }

    @Test("A failed call ends the iteration with its error; nothing is called after it")
    func failure() async throws {
        let method = FakeListMethod(
            pages: ["": FakeListResponse(items: ["a"], nextPageToken: "gone")],
            failure: RPCError(code: .unavailable, message: "down")
        )
        var iterator = method.sequence().makeAsyncIterator()
        #expect(try await iterator.next()?.items == ["a"])
        await #expect(throws: RPCError.self) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(method.requests.count == 2)
    }

    @Test("A server that answers a token with the same token is stopped, not followed forever")
    func repeatedToken() async throws {
        let method = FakeListMethod(pages: [
            "": FakeListResponse(items: ["a"], nextPageToken: "again"),
            "again": FakeListResponse(items: ["b"], nextPageToken: "again"),
        ])
        var items: [String] = []
        let error = await #expect(throws: RPCError.self) {
            for try await item in method.sequence().items { items.append(item) }
        }
        #expect(items == ["a"])
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("same next_page_token") == true)
        #expect(method.requests.count == 2)
    }
}
