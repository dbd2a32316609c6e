import Foundation

/// A gRPC service config file (gRFC A6's JSON, as Google publishes `*_grpc_service_config.json`
/// with each API), read and checked when the generator starts, so that a client embeds only text
/// a `ServiceConfig` parser will accept.
///
/// The check covers what the generator and the runtime rely on: a JSON object; `methodConfig`
/// entries whose `name`s are objects with a string `service` (and optionally `method`), each
/// name in one entry only; `timeout`, `initialBackoff`, `maxBackoff` and `hedgingDelay` in
/// protobuf's JSON form of a Duration (`"0.100s"`); a `retryPolicy` with `maxAttempts` an integer
/// above 1, backoffs above zero, a `backoffMultiplier` above zero and `retryableStatusCodes` a
/// non-empty list of status code names or numbers; not both a retry and a hedging policy.
struct ServiceConfigFile {
    /// The path the file was read from, as given.
    let path: String
    /// The file's text, unchanged.
    let text: String
    /// The services its `methodConfig` names.
    let services: Set<String>
    /// Whether an entry has a name without a service: the default for every service.
    let configuresEveryService: Bool

    /// Whether the config has something for `service`.
    func configures(_ service: String) -> Bool {
        configuresEveryService || services.contains(service)
    }

    /// Reads and checks the file at `path`.
    init(path: String) throws(GeneratorError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableServiceConfig(path: path, reason: "\(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidServiceConfig(path: path, problem: "is not UTF-8 text")
        }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .invalidServiceConfig(path: path, problem: "is not JSON")
        }
        guard case .object(let root) = document else {
            throw .invalidServiceConfig(path: path, problem: "is not a JSON object")
        }
        var checker = Checker(path: path)
        try checker.check(root)
        self.path = path
        self.text = text
        self.services = checker.services
        self.configuresEveryService = checker.configuresEveryService
    }
}

/// gRPC's status code names, as service configs spell them.
private let statusCodeNames: Set<String> = [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
    "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
]

private struct Checker {
    let path: String
    var services: Set<String> = []
    var configuresEveryService = false
    var names: Set<String> = []

    init(path: String) {
        self.path = path
    }

    func fail(_ place: String, _ problem: String) -> GeneratorError {
        .invalidServiceConfig(path: path, problem: "has \(place) \(problem)")
    }

    mutating func check(_ root: [String: JSONValue]) throws(GeneratorError) {
        guard let configs = root["methodConfig"] else { return }
        guard case .array(let list) = configs else { throw fail("\"methodConfig\"", "that is not an array") }
        for (index, item) in list.enumerated() {
            let here = "methodConfig[\(index)]"
            guard case .object(let config) = item else { throw fail(here, "that is not an object") }
            try checkNames(config["name"], at: here)
            try checkDuration(config["timeout"], at: "\(here).timeout")
            if let flag = config["waitForReady"], flag.bool == nil {
                throw fail("\(here).waitForReady", "that is not true or false")
            }
            for key in ["maxRequestMessageBytes", "maxResponseMessageBytes"] {
                if let value = config[key], value.integer.map({ $0 < 0 }) ?? true {
                    throw fail("\(here).\(key)", "that is not a whole number of bytes")
                }
            }
            if config["retryPolicy"] != nil && config["hedgingPolicy"] != nil {
                throw fail(here, "both a retryPolicy and a hedgingPolicy (gRFC A6 allows one)")
            }
            if let retry = config["retryPolicy"] {
                try checkRetryPolicy(retry, at: "\(here).retryPolicy")
            }
            if let hedging = config["hedgingPolicy"] {
                try checkHedgingPolicy(hedging, at: "\(here).hedgingPolicy")
            }
        }
    }

    private mutating func checkNames(_ value: JSONValue?, at here: String) throws(GeneratorError) {
        guard case .array(let list)? = value, !list.isEmpty else {
            throw fail("\(here).name", "that is not a non-empty array of {\"service\": ..., \"method\": ...}")
        }
        for (index, item) in list.enumerated() {
            let at = "\(here).name[\(index)]"
            guard case .object(let name) = item else { throw fail(at, "that is not an object") }
            for key in name.keys.sorted() where key != "service" && key != "method" {
                throw fail(at, "an unknown key \"\(key)\" (a name has \"service\" and \"method\")")
            }
            guard let service = name["service"].map(\.string) ?? "", let method = name["method"].map(\.string) ?? ""
            else {
                throw fail(at, "a service or method that is not a string")
            }
            if service.isEmpty {
                guard method.isEmpty else { throw fail(at, "a method without a service") }
                configuresEveryService = true
            } else {
                services.insert(service)
            }
            guard names.insert("\(service)/\(method)").inserted else {
                throw fail(at, "the name \(service)/\(method), which an earlier entry has already (each name once)")
            }
        }
    }

    private func checkRetryPolicy(_ value: JSONValue, at here: String) throws(GeneratorError) {
        guard case .object(let policy) = value else { throw fail(here, "that is not an object") }
        try checkAttempts(policy["maxAttempts"], at: "\(here).maxAttempts")
        for key in ["initialBackoff", "maxBackoff"] {
            guard policy[key] != nil else { throw fail(here, "no \"\(key)\"") }
            try checkDuration(policy[key], at: "\(here).\(key)", positive: true)
        }
        guard case .number(let multiplier)? = policy["backoffMultiplier"], multiplier > 0 else {
            throw fail("\(here).backoffMultiplier", "that is not a number above zero")
        }
        try checkCodes(policy["retryableStatusCodes"], at: "\(here).retryableStatusCodes", allowEmpty: false)
    }

    private func checkHedgingPolicy(_ value: JSONValue, at here: String) throws(GeneratorError) {
        guard case .object(let policy) = value else { throw fail(here, "that is not an object") }
        try checkAttempts(policy["maxAttempts"], at: "\(here).maxAttempts")
        try checkDuration(policy["hedgingDelay"], at: "\(here).hedgingDelay")
        try checkCodes(policy["nonFatalStatusCodes"], at: "\(here).nonFatalStatusCodes", allowEmpty: true)
    }

    private func checkAttempts(_ value: JSONValue?, at here: String) throws(GeneratorError) {
        guard let attempts = value?.integer, attempts > 1 else {
            throw fail(here, "that is not a whole number above 1")
        }
    }

    private func checkCodes(_ value: JSONValue?, at here: String, allowEmpty: Bool) throws(GeneratorError) {
        guard let value else {
            if allowEmpty { return }
            throw fail(here, "missing (a non-empty list of status codes)")
        }
        guard case .array(let codes) = value, allowEmpty || !codes.isEmpty else {
            throw fail(here, "that is not a non-empty list of status codes")
        }
        for code in codes {
            if let name = code.string, statusCodeNames.contains(name) { continue }
            if code.string == nil, let number = code.integer, (0...16).contains(number) { continue }
            throw fail(here, "\(code), which is not a status code (UNAVAILABLE, ... or 0-16)")
        }
    }

    /// A Duration in protobuf's JSON: seconds with up to nine decimals and an `s`.
    private func checkDuration(_ value: JSONValue?, at here: String, positive: Bool = false) throws(GeneratorError) {
        guard let value else { return }
        guard let text = value.string, text.hasSuffix("s") else {
            throw fail(here, "that is not a duration such as \"1.5s\"")
        }
        let parts = text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        guard digits, parts.count == 1 || (parts.count == 2 && parts[1].count <= 9) else {
            throw fail(here, "\"\(text)\", which is not a duration such as \"1.5s\"")
        }
        if positive, parts.allSatisfy({ $0.allSatisfy { $0 == "0" } }) {
            throw fail(here, "\"\(text)\", which is not above zero")
        }
    }
}

/// Any JSON value, decoded strictly (a number is never a boolean, nor the other way round).
private enum JSONValue: Decodable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// A whole number: a JSON number, or (proto3 JSON) a string of digits.
    var integer: Int? {
        switch self {
        case .number(let number) where number.rounded() == number && abs(number) < 1e15: return Int(number)
        case .string(let text): return Int(text)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .bool(let flag): "\(flag)"
        case .number(let number): number.rounded() == number ? "\(Int(number))" : "\(number)"
        case .string(let text): "\"\(text)\""
        case .array: "an array"
        case .object: "an object"
        case .null: "null"
        }
    }
}
