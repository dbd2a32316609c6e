/// A response held by reference: what the interceptors' path of an inlined unary call hands
/// back, so that the caller's async frame keeps one word for it instead of the response.
@usableFromInline
final class UnaryResponseBox<Message: Sendable> {
    @usableFromInline let response: UnaryResponse<Message>

    @usableFromInline
    init(_ response: UnaryResponse<Message>) {
        self.response = response
    }

    /// The response, from a call that is not inlined: it writes it straight into the caller's
    /// result, where an inlined read would go through a copy in the caller's frame.
    @inlinable @inline(never)
    func take() -> UnaryResponse<Message> {
        response
    }
}
