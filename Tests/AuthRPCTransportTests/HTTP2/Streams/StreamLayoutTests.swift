import CPlatform
import Testing

@testable import AuthRPCTransport

@Suite("A stream is held in the allocator's 256-byte blocks")
struct StreamLayoutTests {
    // A stream lives as long as its call is in flight, so its block is part of every waiting
    // call's memory. Past 248 bytes (glibc's 256-byte chunk less its 8-byte header; Darwin's
    // 256-byte block) it moves to the next size, 64 bytes more a call: reordering or adding a
    // stored property can do that.
    @Test("a stream fits a 256-byte block")
    func fitsChunk() {
        let stream = HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
        let size = withExtendedLifetime(stream) { cplatform_block_size(Unmanaged.passUnretained(stream).toOpaque()) }
        #if os(Linux)
        #expect(size <= 248)
        #else
        #expect(size <= 256)
        #endif
    }
}
