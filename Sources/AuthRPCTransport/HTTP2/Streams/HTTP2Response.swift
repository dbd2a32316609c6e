/// A complete response: the final header block, the body, and the trailing header block.
package struct HTTP2Response: Sendable {
    /// The `:status` of the final (non-1xx) header block.
    package var status: Int
    /// The final header block's regular fields (pseudo-headers removed), then the trailing
    /// block's, each in received order: both blocks share one buffer, so a response costs one
    /// allocation for its fields rather than one per block.
    package var fields: [HTTP2HeaderField]
    /// Where the trailing block starts in ``fields`` (`fields.count` when there is none).
    package var trailersStart: Int
    /// Every DATA byte received, concatenated.
    package var body: [UInt8]
    /// `true` when the final header block also ended the stream (no body, no trailers).
    package var endedWithHeaders: Bool

    /// The final header block's regular fields, in received order.
    package var headers: ArraySlice<HTTP2HeaderField> { fields[..<trailersStart] }
    /// The trailing header block, empty when the response ended without one.
    package var trailers: ArraySlice<HTTP2HeaderField> { fields[trailersStart...] }

    package init(
        status: Int,
        fields: [HTTP2HeaderField],
        trailersStart: Int,
        body: [UInt8],
        endedWithHeaders: Bool
    ) {
        precondition((0...fields.count).contains(trailersStart), "the trailers start inside the fields")
        self.status = status
        self.fields = fields
        self.trailersStart = trailersStart
        self.body = body
        self.endedWithHeaders = endedWithHeaders
    }

    package init(
        status: Int,
        headers: [HTTP2HeaderField],
        body: [UInt8],
        trailers: [HTTP2HeaderField],
        endedWithHeaders: Bool
    ) {
        self.init(
            status: status,
            fields: headers + trailers,
            trailersStart: headers.count,
            body: body,
            endedWithHeaders: endedWithHeaders
        )
    }
}
