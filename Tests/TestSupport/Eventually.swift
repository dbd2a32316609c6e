/// Polls `condition` every 50 ms until it holds; throws, naming `what`, after `limit`.
///
/// For waiting on something another thread or process does: the limit is real time, far past
/// what the condition needs even while every suite starts its peers on two cores, so only a
/// condition that never comes reaches it.
public func eventually(
    _ what: String,
    within limit: Duration = .seconds(60),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw PeerError("\(what): not within \(limit)") }
        try await Task.sleep(for: .milliseconds(50))
    }
}
