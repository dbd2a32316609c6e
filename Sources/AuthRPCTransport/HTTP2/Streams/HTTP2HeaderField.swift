/// One HTTP/2 header field, in the order it was sent or received.
package struct HTTP2HeaderField: Sendable, Hashable {
    /// The field name (lowercase on the wire).
    package var name: String
    /// The field value.
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
