import AuthRPC
import AuthRPCSyntax

/// How a method's `x-goog-request-params` header is built from its request (AIP-4222): the
/// routing parameters of its `google.api.routing` annotation, or, without one, the variables of
/// its `google.api.http` path.
///
/// Generated clients hold one rule per routed method (compiled once) and call
/// ``requestParams(for:)`` at the start of every call. Each parameter reads a field of the
/// request and matches it against its template; a key's value is the one from the last
/// parameter of that key whose field matched with a value that is not empty ("last one wins").
/// Keys whose parameters all failed are left out, and when no key is left there is no header.
/// Keys and values are percent-encoded (RFC 6570 section 3.2.2: everything but `A-Z a-z 0-9 - .
/// _ ~`, as UTF-8) and joined as `key1=value1&key2=value2`, keys in the order they first appear
/// among the parameters.
///
/// ```swift
/// let rule = RoutingRule<TableRequest>([
///     RoutingParameter(field: "table_name", pathTemplate: try RoutingPathTemplate("{routing_id=projects/*}/**")) {
///         $0.tableName
///     },
///     RoutingParameter(field: "app_profile_id", pathTemplate: try RoutingPathTemplate("{routing_id=**}")) {
///         $0.appProfileID
///     },
/// ])
/// rule.requestParams(for: request)   // "routing_id=profiles%2Fprof_qux" when app_profile_id is set
/// ```
///
/// The implicit rule of a `google.api.http` path is the same with template-less parameters: for
/// `"/v1/{topic=projects/*/topics/*}:publish"`, `RoutingParameter(field: "topic") { $0.topic }`
/// sends the whole field under its path (`topic=projects%2Fp%2Ftopics%2Ft`).
public struct RoutingRule<Request>: Sendable {
    /// One header key and the parameters that may give it a value, last first.
    private struct Key: Sendable {
        var encodedName: String
        var parameters: [Int]
    }

    /// The parameters, in the order given.
    public let parameters: [RoutingParameter<Request>]
    private let keys: [Key]

    /// A rule made of `parameters`, in their annotation's order. An empty list sends no header
    /// (an empty `google.api.routing` annotation turns the implicit rule off).
    public init(_ parameters: [RoutingParameter<Request>]) {
        self.parameters = parameters
        var keys: [Key] = []
        for (index, parameter) in parameters.enumerated() {
            let name = parameter.pathTemplate.key
            if let existing = keys.firstIndex(where: { $0.encodedName == PercentEncoding.encodeUnreserved(name) }) {
                keys[existing].parameters.insert(index, at: 0)
            } else {
                keys.append(Key(encodedName: PercentEncoding.encodeUnreserved(name), parameters: [index]))
            }
        }
        self.keys = keys
    }

    /// The `x-goog-request-params` value for `request`, or `nil` when no key has a value.
    ///
    /// Allocates the returned string only (none when it fits in a small string); a few thousand
    /// instructions for a typical resource name.
    public func requestParams(for request: Request) -> String? {
        parameters.withUnsafeBufferPointer { parameters in
            withUnsafeTemporaryAllocation(of: Match.self, capacity: keys.count) { found in
                var length = 0
                for (index, key) in keys.enumerated() {
                    var match = Match(text: "", range: 0..<0)
                    for parameter in key.parameters {
                        var text = parameters[parameter].text(of: request)
                        let matched = text.withUTF8 { parameters[parameter].pathTemplate.matchedRange(in: $0) }
                        if let range = matched, !range.isEmpty {
                            match = Match(text: text, range: range)
                            // Room for the worst case, every byte escaped, rather than a counting pass.
                            length += (length == 0 ? 0 : 1) + key.encodedName.utf8.count + 1 + 3 * range.count
                            break
                        }
                    }
                    found.initializeElement(at: index, to: match)
                }
                defer { found.deinitialize() }
                guard length > 0 else { return nil }
                return String(unsafeUninitializedCapacity: length) { output in
                    var written = 0
                    for (index, key) in keys.enumerated() where !found[index].range.isEmpty {
                        if written > 0 {
                            output[written] = UInt8(ascii: "&")
                            written += 1
                        }
                        for byte in key.encodedName.utf8 {
                            output[written] = byte
                            written += 1
                        }
                        output[written] = UInt8(ascii: "=")
                        written += 1
                        let range = found[index].range
                        written = found[index].text.withUTF8 { bytes in
                            PercentEncoding.encodeUnreserved(
                                UnsafeBufferPointer(rebasing: bytes[range]),
                                into: output,
                                at: written
                            )
                        }
                    }
                    return written
                }
            }
        }
    }

    /// A key's value: the field's text and the bytes of it that are sent (empty: no value).
    private struct Match {
        var text: String
        var range: Range<Int>
    }
}

/// One routing parameter (`google.api.RoutingParameter`): a request field and the template
/// that picks the header key and value out of it.
public struct RoutingParameter<Request>: Sendable {
    /// The field's path in the request (`table_name`, `book.author.name`), as in the annotation.
    public let field: String
    /// The template matched against the field's value; ``RoutingPathTemplate/wholeValue(key:)``
    /// with the field's path as the key when the annotation gives none.
    public let pathTemplate: RoutingPathTemplate
    private let read: @Sendable (Request) -> String

    /// A parameter that reads `field` with `value`.
    ///
    /// - Parameters:
    ///   - field: The field's path, which is also the key when `pathTemplate` is `nil`.
    ///   - pathTemplate: What the field must match and which part of it is sent; `nil` sends the
    ///     whole field under `field`.
    ///   - value: Reads the field from a request (an unset field reads as empty, and an empty
    ///     value is never sent).
    public init(
        field: String,
        pathTemplate: RoutingPathTemplate? = nil,
        value: @escaping @Sendable (Request) -> String
    ) {
        self.field = field
        self.pathTemplate = pathTemplate ?? .wholeValue(key: field)
        self.read = value
    }

    /// The value this parameter gives `request`: the matched part of its field, or `nil` when
    /// the field does not match.
    public func value(from request: Request) -> Substring? {
        pathTemplate.match(read(request))
    }

    /// The field's text in `request`.
    func text(of request: Request) -> String { read(request) }
}
