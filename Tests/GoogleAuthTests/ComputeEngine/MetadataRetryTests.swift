import Testing

@testable import GoogleAuth

@Suite("MetadataRetry: google-auth's attempts and backoff, bounded in time")
struct MetadataRetryTests {
    @Test("the standard policy: five attempts, waits of 1, 2, 4 and 8 s without jitter, then none")
    func standard() {
        let retry = MetadataRetry.standard
        let waits = (1...5).map { retry.wait(afterAttempt: $0, elapsed: .zero, jitter: 0) }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), nil])
        #expect(MetadataRetry.never.wait(afterAttempt: 1, elapsed: .zero, jitter: 0) == nil)
    }

    @Test("jitter moves a wait by at most 10 % either way")
    func jitter() {
        let retry = MetadataRetry(initialBackoff: .seconds(10))
        #expect(retry.wait(afterAttempt: 1, elapsed: .zero, jitter: -1) == .seconds(9))
        #expect(retry.wait(afterAttempt: 1, elapsed: .zero, jitter: 1) == .seconds(11))
        #expect(retry.wait(afterAttempt: 1, elapsed: .zero, jitter: 7) == .seconds(11))
    }

    @Test("a wait that would end past maximumDuration is not begun; a request's timeout is cut to what is left")
    func maximumDuration() {
        let retry = MetadataRetry(attempts: 5, initialBackoff: .seconds(1), maximumDuration: .seconds(10))
        #expect(retry.wait(afterAttempt: 2, elapsed: .seconds(7), jitter: 0) == .seconds(2))
        #expect(retry.wait(afterAttempt: 2, elapsed: .seconds(8), jitter: 0) == nil)
        #expect(retry.timeout(.seconds(10), elapsed: .seconds(3)) == .seconds(7))
        #expect(retry.timeout(.seconds(5), elapsed: .seconds(3)) == .seconds(5))
        #expect(retry.timeout(.seconds(5), elapsed: .seconds(12)) == .zero)
    }

    @Test("google-auth's retryable statuses: 408, 429, 500, 503, 504; nothing else")
    func statuses() {
        let retryable = (100...599).filter(MetadataRetry.isRetryable(status:))
        #expect(retryable == [408, 429, 500, 503, 504])
    }

    @Test("out-of-range settings are clamped")
    func clamped() {
        let retry = MetadataRetry(attempts: 0, initialBackoff: .seconds(-1), maximumDuration: .seconds(-1))
        #expect(retry.attempts == 1)
        #expect(retry.initialBackoff == .zero)
        #expect(retry.maximumDuration == .zero)
    }
}
