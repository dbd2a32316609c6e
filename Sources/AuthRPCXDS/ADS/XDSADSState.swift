internal import AuthRPC
internal import SwiftProtobuf

/// What the client knows and has asked for on its ADS stream (state of the world, xDS v3), with
/// no I/O: the stream feeds it responses and the time, and sends the requests it returns.
///
/// Per resource type it keeps the names subscribed, the version last ACKed, the nonce last seen,
/// and each resource's last good version. A response is answered with an ACK (its version and
/// nonce) or, when any resource in it is refused, a NACK (the previous version, the new nonce,
/// and `error_detail` naming every refused resource); the valid resources of a NACKed response
/// are still taken, the refused ones keep their last good version (gRFC A27, A46). A listener
/// or cluster the server stops sending is deleted unless the server has the
/// `ignore_resource_deletion` feature (gRFC A53); a subscribed resource not heard of within 15 s of
/// the request is reported as not existing, whatever the responses in between left out.
struct XDSADSState {
    /// What changed for the watchers.
    enum Change: Sendable, Hashable {
        case updated(XDSResourceType, String)
        case removed(XDSResourceType, String)
        case doesNotExist(XDSResourceType, String)
        case nacked(XDSResourceType, String, XDSResourceError)

        /// Whether this is a refused update (what the client holds stays as it was).
        var isNACK: Bool {
            if case .nacked = self { return true }
            return false
        }
    }

    /// One resource as the client holds it.
    struct Entry: Sendable, Hashable {
        /// The last good version; nil when the server said it does not exist or only sent bad ones.
        var resource: XDSResource?
        /// The `version_info` of the response that carried ``resource``.
        var version: String
        /// Why the newest version was refused, if it was.
        var nackReason: XDSResourceError?
    }

    struct TypeState: Sendable {
        var names: Set<String> = []
        var ackedVersion = ""
        var nonce = ""
        var entries: [String: Entry] = [:]
        /// Subscribed names not heard of yet, with when they are declared not to exist.
        var pending: [String: ContinuousClock.Instant] = [:]
    }

    /// gRFC A27's does-not-exist timer.
    static let doesNotExistTimeout: Duration = .seconds(15)

    let node: Envoy_Config_Core_V3_Node
    let ignoresResourceDeletion: Bool
    /// How long a subscribed resource may go unheard of before it is declared not to exist
    /// (``doesNotExistTimeout``; tests shorten it).
    let doesNotExistTimeout: Duration
    private(set) var types: [XDSResourceType: TypeState] = [:]
    /// Whether this stream's first request (the one that carries the node) has been made.
    private var sentNode = false

    init(
        node: Envoy_Config_Core_V3_Node,
        ignoresResourceDeletion: Bool,
        doesNotExistTimeout: Duration = Self.doesNotExistTimeout
    ) {
        self.node = node
        self.ignoresResourceDeletion = ignoresResourceDeletion
        self.doesNotExistTimeout = doesNotExistTimeout
    }

    /// A watcher wants `name`: the request that adds it, or nil when it was already subscribed.
    mutating func subscribe(
        _ type: XDSResourceType,
        _ name: String,
        now: ContinuousClock.Instant
    )
        -> Envoy_Service_Discovery_V3_DiscoveryRequest?
    {
        guard types[type, default: TypeState()].names.insert(name).inserted else { return nil }
        if types[type]?.entries[name] == nil {
            types[type]?.pending[name] = now + doesNotExistTimeout
        }
        return request(for: type)
    }

    /// No watcher wants `name` any more: the request that drops it (the cache forgets it).
    mutating func unsubscribe(_ type: XDSResourceType, _ name: String) -> Envoy_Service_Discovery_V3_DiscoveryRequest? {
        guard types[type]?.names.remove(name) != nil else { return nil }
        types[type]?.entries[name] = nil
        types[type]?.pending[name] = nil
        return request(for: type)
    }

    /// A new stream is up: one request per subscribed type, with the versions last ACKed and no
    /// nonce; the names not heard of yet get a new timer.
    mutating func streamStarted(now: ContinuousClock.Instant) -> [Envoy_Service_Discovery_V3_DiscoveryRequest] {
        sentNode = false
        var requests: [Envoy_Service_Discovery_V3_DiscoveryRequest] = []
        for type in XDSResourceType.allCases {
            guard var state = types[type], !state.names.isEmpty else { continue }
            state.nonce = ""
            for name in state.names where state.entries[name] == nil {
                state.pending[name] = now + doesNotExistTimeout
            }
            types[type] = state
            requests.append(request(for: type))
        }
        return requests
    }

    /// Takes a response: the ACK or NACK to send and what changed. Throws when the response
    /// breaks the protocol's bounds (a nonce or version over 1 KiB, too many resources): the
    /// stream is then ended and started again, nothing of the response taken.
    mutating func receive(
        _ response: Envoy_Service_Discovery_V3_DiscoveryResponse
    )
        throws(XDSResourceError) -> (request: Envoy_Service_Discovery_V3_DiscoveryRequest?, changes: [Change])
    {
        guard response.nonce.utf8.count <= XDSLimits.versionOrNonceBytes else {
            throw XDSResourceError("nonce", "longer than \(XDSLimits.versionOrNonceBytes) bytes")
        }
        guard response.versionInfo.utf8.count <= XDSLimits.versionOrNonceBytes else {
            throw XDSResourceError("version_info", "longer than \(XDSLimits.versionOrNonceBytes) bytes")
        }
        guard response.resources.count <= XDSLimits.resourcesPerResponse else {
            throw XDSResourceError("resources", "more than \(XDSLimits.resourcesPerResponse) resources")
        }
        // A type the client never asked for is not answered.
        guard let type = XDSResourceType(rawValue: response.typeURL), var state = types[type] else {
            return (nil, [])
        }
        state.nonce = response.nonce
        var changes: [Change] = []
        var problems: [String] = []
        var seen: Set<String> = []
        for (index, any) in response.resources.enumerated() {
            switch XDSResourceDecoder.decode(any, as: type) {
            case .unnamed(let error):
                problems.append("resource \(index): \(error)")
            case .valid(let name, let resource):
                guard seen.insert(name).inserted else {
                    problems.append("resource \(index): '\(name)' appears twice")
                    continue
                }
                guard state.names.contains(name) else { continue }
                state.pending[name] = nil
                let entry = Entry(resource: resource, version: response.versionInfo, nackReason: nil)
                if state.entries[name] != entry {
                    if state.entries[name]?.resource != resource { changes.append(.updated(type, name)) }
                    state.entries[name] = entry
                }
            case .invalid(let name, let error):
                guard seen.insert(name).inserted else {
                    problems.append("resource \(index): '\(name)' appears twice")
                    continue
                }
                problems.append("\(name): \(error)")
                guard state.names.contains(name) else { continue }
                state.pending[name] = nil
                var entry = state.entries[name] ?? Entry(resource: nil, version: "", nackReason: nil)
                entry.nackReason = error
                state.entries[name] = entry
                changes.append(.nacked(type, name, error))
            }
        }
        // State of the world: a listener or cluster the client had and the response leaves out
        // is deleted, unless the server asked for deletions to be ignored. One never heard of is
        // left to its timer, as gRPC C-core does: the response may answer a request sent before
        // the name was asked for, so leaving it out says nothing yet.
        if type == .listener || type == .cluster {
            for name in state.names.sorted() where !seen.contains(name) {
                guard !ignoresResourceDeletion, let entry = state.entries[name], entry.resource != nil else { continue }
                state.entries[name] = Entry(resource: nil, version: response.versionInfo, nackReason: nil)
                changes.append(.removed(type, name))
            }
        }
        if problems.isEmpty { state.ackedVersion = response.versionInfo }
        types[type] = state
        var answer = request(for: type)
        if !problems.isEmpty {
            var status = Google_Rpc_Status()
            status.code = 3  // INVALID_ARGUMENT
            status.message = String(problems.joined(separator: "; ").prefix(4096))
            answer.errorDetail = status
        }
        return (answer, changes)
    }

    /// The subscribed resources whose timer has run out by `now`, now known not to exist.
    mutating func expire(now: ContinuousClock.Instant) -> [Change] {
        var changes: [Change] = []
        for type in XDSResourceType.allCases {
            guard var state = types[type] else { continue }
            for (name, deadline) in state.pending where deadline <= now {
                state.pending[name] = nil
                state.entries[name] = Entry(resource: nil, version: "", nackReason: nil)
                changes.append(.doesNotExist(type, name))
            }
            types[type] = state
        }
        return changes
    }

    /// The earliest does-not-exist deadline, if any timer runs.
    var nextDeadline: ContinuousClock.Instant? {
        types.values.flatMap(\.pending.values).min()
    }

    /// The request for `type` as things stand: every subscribed name (sorted, so it reads the same
    /// each time), the version last ACKed, the nonce last seen, and the node on the stream's first.
    private mutating func request(for type: XDSResourceType) -> Envoy_Service_Discovery_V3_DiscoveryRequest {
        var request = Envoy_Service_Discovery_V3_DiscoveryRequest()
        let state = types[type, default: TypeState()]
        request.typeURL = type.typeURL
        request.resourceNames = state.names.sorted()
        request.versionInfo = state.ackedVersion
        request.responseNonce = state.nonce
        if !sentNode {
            request.node = node
            sentNode = true
        }
        return request
    }
}
