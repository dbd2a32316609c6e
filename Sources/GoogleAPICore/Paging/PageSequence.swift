public import AuthRPC

/// The pages of an AIP-158 list method as an `AsyncSequence`: the first call with the request as
/// given, then one call per `next_page_token` until a page comes back without one.
///
/// Generated clients return one from `<method>Pages(_:options:)` for every method whose request
/// has `page_token` and `page_size` (or `max_results`) and whose response has `next_page_token`
/// and a repeated field; ``items`` flattens the pages into that field's items.
///
/// ```swift
/// var request = Google_Pubsub_V1_ListTopicsRequest()
/// request.project = "projects/my-project"
/// request.pageSize = 100
/// for try await topic in publisher.listTopicsPages(request).items {
///     print(topic.name)
/// }
/// ```
///
/// Each page is one call made with `options` (its deadline covers that call alone) and only
/// when the iteration asks for it: stopping early makes no further call. The first failure ends
/// the iteration by throwing it. A server that answers a page with the token it was asked for
/// would loop forever; the iteration throws `internalError` instead.
public struct PageSequence<Request: Sendable, Response: Sendable, Item>: AsyncSequence, Sendable {
    /// A page: one response of the list method.
    public typealias Element = Response
    /// What ends an iteration early: the failed call's error.
    public typealias Failure = RPCError

    /// Calls the list method once.
    public typealias Fetch = @Sendable (Request, CallOptions?) async throws(RPCError) -> Response

    /// The first request (its `page_token` says where the first page starts).
    public let request: Request
    /// The options of every call.
    public let options: CallOptions?
    private let fetch: Fetch
    private let setPageToken: @Sendable (inout Request, String) -> Void
    private let nextPageToken: @Sendable (Response) -> String
    private let pageItems: @Sendable (Response) -> [Item]

    /// The pages of the list method `fetch` calls.
    ///
    /// - Parameters:
    ///   - request: The first request.
    ///   - options: The options of every call; the channel's defaults when `nil`.
    ///   - fetch: Calls the list method with a request and the options.
    ///   - setPageToken: Writes a page token into a request (`$0.pageToken = $1`).
    ///   - nextPageToken: Reads a response's `next_page_token`.
    ///   - items: Reads a response's items (the repeated field).
    public init(
        request: Request,
        options: CallOptions?,
        fetch: @escaping Fetch,
        setPageToken: @escaping @Sendable (inout Request, String) -> Void,
        nextPageToken: @escaping @Sendable (Response) -> String,
        items: @escaping @Sendable (Response) -> [Item]
    ) {
        self.request = request
        self.options = options
        self.fetch = fetch
        self.setPageToken = setPageToken
        self.nextPageToken = nextPageToken
        self.pageItems = items
    }

    /// The items of every page, in order.
    public var items: PageItemSequence<Request, Response, Item> { PageItemSequence(pages: self) }

    /// Reads a page's items, as ``items`` does.
    public func items(of page: Response) -> [Item] { pageItems(page) }

    /// An iterator that makes the first call when first asked for a page.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self)
    }

    /// Makes the calls, one per `next`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// A page.
        public typealias Element = Response
        /// The failed call's error.
        public typealias Failure = RPCError

        private let pages: PageSequence
        /// The next request to send; `nil` once the last page came (or a call failed).
        private var next: Request?
        /// The token the next request carries, to catch a server that repeats it.
        private var sentToken: String?

        init(pages: PageSequence) {
            self.pages = pages
            self.next = pages.request
        }

        /// Makes the next call and returns its page; `nil` after the page without a token, and
        /// after a failure (which this call throws).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RPCError) -> Response? {
            guard let request = next else { return nil }
            next = nil
            let page = try await pages.fetch(request, pages.options)
            let token = pages.nextPageToken(page)
            if !token.isEmpty {
                guard token != sentToken else {
                    throw RPCError(
                        code: .internalError,
                        message: "the server answered page token \"\(token.prefix(64))\" with the same next_page_token"
                    )
                }
                var following = request
                pages.setPageToken(&following, token)
                next = following
                sentToken = token
            }
            return page
        }

        /// Makes the next call and returns its page, as ``next(isolation:)`` does.
        public mutating func next() async throws(RPCError) -> Response? {
            try await next(isolation: nil)
        }
    }
}

/// The items of an AIP-158 list method, page after page (``PageSequence/items``).
///
/// A page is fetched when the items of the one before have all been handed out; empty pages
/// are skipped (a server may answer one with a `next_page_token`).
public struct PageItemSequence<Request: Sendable, Response: Sendable, Item>: AsyncSequence, Sendable {
    /// An item of a page.
    public typealias Element = Item
    /// What ends an iteration early: the failed call's error.
    public typealias Failure = RPCError

    /// The pages the items come from.
    public let pages: PageSequence<Request, Response, Item>

    /// The items of `pages`.
    public init(pages: PageSequence<Request, Response, Item>) {
        self.pages = pages
    }

    /// An iterator that makes the first call when first asked for an item.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: pages.makeAsyncIterator(), sequence: pages)
    }

    /// Hands out the items of one page, then fetches the next.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// An item.
        public typealias Element = Item
        /// The failed call's error.
        public typealias Failure = RPCError

        private var pages: PageSequence<Request, Response, Item>.AsyncIterator
        private let sequence: PageSequence<Request, Response, Item>
        private var current: IndexingIterator<[Item]> = [Item]().makeIterator()

        init(
            pages: PageSequence<Request, Response, Item>.AsyncIterator,
            sequence: PageSequence<Request, Response, Item>
        ) {
            self.pages = pages
            self.sequence = sequence
        }

        /// The next item, fetching pages as needed; `nil` after the last page, and after a
        /// failure (which this call throws).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RPCError) -> Item? {
            while true {
                if let item = current.next() { return item }
                guard let page = try await pages.next(isolation: actor) else { return nil }
                current = sequence.items(of: page).makeIterator()
            }
        }

        /// The next item, as ``next(isolation:)`` gives it.
        public mutating func next() async throws(RPCError) -> Item? {
            try await next(isolation: nil)
        }
    }
}
